package io.indexbridge

import java.nio.file.{Files, Path, StandardCopyOption}

/** Writing files so that nothing partial is ever visible (DESIGN rule 5). */
object Storage {

  /** Writes `bytes` to a temporary file beside `path`, then renames it into place. */
  def writeAtomically(path: Path, bytes: Array[Byte]): Unit = {
    val dir = Option(path.toAbsolutePath.getParent).getOrElse(path.toAbsolutePath)
    Files.createDirectories(dir)
    val tmp = Files.createTempFile(dir, "." + path.getFileName.toString, ".tmp")
    try {
      Files.write(tmp, bytes)
      Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    } finally Files.deleteIfExists(tmp)
  }
}
