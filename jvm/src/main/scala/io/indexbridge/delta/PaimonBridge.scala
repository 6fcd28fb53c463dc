package io.indexbridge.delta

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets
import java.nio.file.Path
import java.security.MessageDigest
import java.util.UUID

import io.indexbridge.Storage
import io.indexbridge.iceberg.{PaimonDeletionFile, PaimonBridge => IcebergBridge}
import io.indexbridge.paimon.table.DeletionFile

/** Paimon's deletion vectors as Delta Lake DV files and descriptors.
  *
  * A Paimon deletion file of 64-bit DVs is a Delta DV file (spec/lakehouse-dv.md §4): with `u`
  * descriptors the whole file is copied (every frame checked first) to
  * `<table>/deletion_vector_<uuid>.bin` and each data file gets a descriptor at Paimon's offset
  * (`sizeInBytes` = Paimon's length - 8); with `p` descriptors nothing is copied, the descriptors
  * point at Paimon's own files. 32-bit DVs cannot be read by Delta in place: `p` is refused, `u`
  * writes a new DV file of the converted 64-bit frames. The UUID of each copy is the UUID v5 of
  * the deletion file's absolute path in indexbridge's namespace, so a rerun (and Python's
  * `indexbridge.delta.bridge`, which this mirrors) writes the same names and bytes.
  */
object PaimonBridge {
  /** indexbridge's namespace for UUID v5 of deletion files (the Python module's `_NAMESPACE`). */
  val Namespace: UUID = UUID.fromString("6f2d9a52-1c1e-4f0b-9d1e-5b0c7c2e4a10")

  /** RFC 4122 UUID v5 (SHA-1) of a name in a namespace, as Python's `uuid.uuid5` (the JDK has
    * only v3, `nameUUIDFromBytes`). */
  def uuid5(namespace: UUID, name: String): UUID = {
    val sha = MessageDigest.getInstance("SHA-1")
    sha.update(ByteBuffer.allocate(16).putLong(namespace.getMostSignificantBits).putLong(namespace.getLeastSignificantBits).array)
    val h = sha.digest(name.getBytes(StandardCharsets.UTF_8))
    h(6) = (h(6) & 0x0f | 0x50).toByte
    h(8) = (h(8) & 0x3f | 0x80).toByte
    val b = ByteBuffer.wrap(h)
    new UUID(b.getLong, b.getLong)
  }

  def copyUuid(deletionFile: String): UUID = uuid5(Namespace, deletionFile)

  /** The Delta DVs of one Paimon deletion file (`outDir` is the Delta table root for `u`);
    * returns (data file name, descriptor) per data file with a DV. */
  def writeDelta(file: PaimonDeletionFile, outDir: Path, storage: String = DeletionVectorFile.UuidRelative): Seq[(String, DeletionVectorDescriptor)] = {
    require(storage == "u" || storage == "p", s"storage must be 'u' or 'p', got '$storage'")
    if (file.dvs.isEmpty) return Nil
    val data = DeletionFile.readIndexFile(file.path)
    val checked = IcebergBridge.checkedFrames(file, data, convert = storage == "u")
    val out = outDir.toAbsolutePath
    if (checked.forall(_._3.bitmap64)) {
      if (storage == "p")
        checked.map { case (r, _, dv) => r.dataFile -> DeletionVectorFile.absolute(file.path, r.length - 8, dv.cardinality, r.offset) }
      else {
        val uuid = copyUuid(file.path)
        Storage.writeAtomically(out.resolve(DeletionVectorFile.fileName(uuid)), data) // the whole file, as it is
        checked.map { case (r, _, dv) => r.dataFile -> DeletionVectorFile.uuidRelative(uuid, r.length - 8, dv.cardinality, r.offset) }
      }
    } else {
      if (storage == "p")
        throw new IllegalArgumentException(s"${file.path} holds 32-bit deletion vectors, which Delta cannot read in place: " +
          "use --storage u (converted to 64-bit frames)")
      DeletionVectorFile.write(out, checked.map { case (r, frame, dv) => DeletionVectorFile.DvFrame(r.dataFile, frame, dv.cardinality) },
        fileUuid = copyUuid(file.path))
    }
  }
}
