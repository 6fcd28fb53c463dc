// boltgo: the reference side of indexbridge's BoltDB tests: go.etcd.io/bbolt v1.3.5, the
// version bleve v1.0.14 (scorch's store/root.bolt) requires.
//
//	boltgo write JOBS.json     write bolt files from bucket trees; prints [{"path","attempts"}]
//	boltgo dump FILE...        each file's tree, meta, stats and tx.Check() errors (JSON list)
//	boltgo scorch DIR SEED     a real bleve v1.0.14 scorch index (several batches, deletes,
//	                           updates) in DIR; its store/root.bolt is what the tests read
//	boltgo bleve-...           whole bleve indexes (build, update, answer queries, map, ...):
//	                           bleve.go
//
// A bucket is {"seq": n, "items": [[key, value], ...]}: keys hex, a value either hex (a
// key/value; "hex*N" repeats the bytes N times) or a bucket (a nested bucket). The root
// bucket is the transaction's own (tx.Cursor().Bucket()): its items are normally buckets.
//
// A job is {"path", "page_size", "txs": [bucket, ...], "canonical": bool, "attempts": n,
// "no_freelist_sync": bool}. The file is created empty and each tx makes the database equal
// to its bucket (deleting what it lacks, putting what it has), one bbolt transaction each.
//
// "canonical": bbolt spills the child buckets of a bucket in Go map order, so the pages of a
// bucket with two or more non-inline children are laid out in a random order. With canonical
// the job is rewritten (up to "attempts" times) until every bucket's non-inline children have
// ascending root pages in key order: the layout that spills children in key order.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blevesearch/bleve"
	"github.com/blevesearch/bleve/index/scorch"
	bolt "go.etcd.io/bbolt"
)

type bucketJSON struct {
	Seq   uint64              `json:"seq"`
	Items [][]json.RawMessage `json:"items"`
}

type job struct {
	Path           string       `json:"path"`
	PageSize       int          `json:"page_size"`
	Txs            []bucketJSON `json:"txs"`
	Canonical      bool         `json:"canonical"`
	Attempts       int          `json:"attempts"`
	NoFreelistSync bool         `json:"no_freelist_sync"`
}

type jobResult struct {
	Path     string `json:"path"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "boltgo:", err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) < 2 {
		check(fmt.Errorf("usage: boltgo write JOBS.json | dump FILE... | scorch DIR SEED"))
	}
	switch os.Args[1] {
	case "write":
		data, err := os.ReadFile(os.Args[2])
		check(err)
		var jobs []job
		check(json.Unmarshal(data, &jobs))
		var results []jobResult
		for _, j := range jobs {
			results = append(results, runJob(j))
		}
		emit(results)
	case "dump":
		var dumps []map[string]interface{}
		for _, path := range os.Args[2:] {
			dumps = append(dumps, dump(path))
		}
		emit(dumps)
	case "scorch":
		var seed int64
		_, err := fmt.Sscan(os.Args[3], &seed)
		check(err)
		check(scorchIndex(os.Args[2], seed))
	default:
		if !bleveMain(os.Args[1:]) {
			check(fmt.Errorf("unknown command %q", os.Args[1]))
		}
	}
}

func emit(v interface{}) {
	out, err := json.Marshal(v)
	check(err)
	_, err = os.Stdout.Write(append(out, '\n'))
	check(err)
}

func runJob(j job) jobResult {
	attempts := j.Attempts
	if attempts < 1 {
		attempts = 1
	}
	for n := 1; ; n++ {
		err := writeJob(j)
		if err != nil {
			return jobResult{Path: j.Path, Attempts: n, Error: err.Error()}
		}
		if !j.Canonical {
			return jobResult{Path: j.Path, Attempts: n}
		}
		ok, err := canonical(j.Path)
		if err != nil {
			return jobResult{Path: j.Path, Attempts: n, Error: err.Error()}
		}
		if ok {
			return jobResult{Path: j.Path, Attempts: n}
		}
		if n == attempts {
			return jobResult{Path: j.Path, Attempts: n, Error: "no canonical layout"}
		}
	}
}

func writeJob(j job) error {
	_ = os.Remove(j.Path)
	db, err := bolt.Open(j.Path, 0600, &bolt.Options{PageSize: j.PageSize, NoFreelistSync: j.NoFreelistSync, NoSync: true})
	if err != nil {
		return err
	}
	for _, target := range j.Txs {
		target := target
		err = db.Update(func(tx *bolt.Tx) error { return syncBucket(tx.Cursor().Bucket(), &target) })
		if err != nil {
			_ = db.Close()
			return err
		}
	}
	return db.Close()
}

// syncBucket makes b hold exactly target's items and sequence.
func syncBucket(b *bolt.Bucket, target *bucketJSON) error {
	wanted := map[string]bool{} // key -> is a bucket
	for _, item := range target.Items {
		key, err := hexString(item[0])
		if err != nil {
			return err
		}
		wanted[string(key)] = len(item[1]) > 0 && item[1][0] == '{'
	}
	type existing struct {
		key      []byte
		isBucket bool
	}
	var stale []existing
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		isBucket, ok := wanted[string(k)]
		if !ok || isBucket != (v == nil) {
			stale = append(stale, existing{append([]byte(nil), k...), v == nil})
		}
	}
	for _, e := range stale {
		var err error
		if e.isBucket {
			err = b.DeleteBucket(e.key)
		} else {
			err = b.Delete(e.key)
		}
		if err != nil {
			return err
		}
	}
	for _, item := range target.Items {
		key, _ := hexString(item[0])
		if item[1][0] == '{' {
			var sub bucketJSON
			if err := json.Unmarshal(item[1], &sub); err != nil {
				return err
			}
			child := b.Bucket(key)
			if child == nil {
				var err error
				if child, err = b.CreateBucket(key); err != nil {
					return err
				}
			}
			if err := syncBucket(child, &sub); err != nil {
				return err
			}
		} else {
			value, err := hexString(item[1])
			if err != nil {
				return err
			}
			if old := b.Get(key); old == nil || !bytes.Equal(old, value) {
				if err := b.Put(key, value); err != nil {
					return err
				}
			}
		}
	}
	if target.Seq != b.Sequence() {
		return b.SetSequence(target.Seq)
	}
	return nil
}

// hexString decodes "hex", or "hex*N": the bytes repeated N times (large values).
func hexString(raw json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	s, times, repeated := strings.Cut(s, "*")
	b, err := hex.DecodeString(s)
	if err != nil || !repeated {
		return b, err
	}
	var n int
	if _, err := fmt.Sscan(times, &n); err != nil {
		return nil, err
	}
	return bytes.Repeat(b, n), nil
}

// canonical: in every bucket, the non-inline child buckets' root pages ascend in key order.
func canonical(path string) (bool, error) {
	db, err := bolt.Open(path, 0600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer db.Close()
	ok := true
	err = db.View(func(tx *bolt.Tx) error {
		var walk func(b *bolt.Bucket)
		walk = func(b *bolt.Bucket) {
			var last uint64
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v != nil {
					continue
				}
				child := b.Bucket(k)
				if root := uint64(child.Root()); root != 0 {
					if root < last {
						ok = false
					}
					last = root
				}
				walk(child)
			}
		}
		walk(tx.Cursor().Bucket())
		return nil
	})
	return ok, err
}

func dump(path string) map[string]interface{} {
	out := map[string]interface{}{"path": path}
	db, err := bolt.Open(path, 0600, &bolt.Options{ReadOnly: true})
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		root := tx.Cursor().Bucket()
		out["tree"] = dumpBucket(root)
		out["txid"] = tx.ID()
		out["page_size"] = db.Info().PageSize
		out["size"] = tx.Size()
		stats := root.Stats()
		out["stats"] = map[string]int{
			"branch_pages": stats.BranchPageN, "branch_overflow": stats.BranchOverflowN,
			"leaf_pages": stats.LeafPageN, "leaf_overflow": stats.LeafOverflowN,
			"buckets": stats.BucketN, "inline_buckets": stats.InlineBucketN, "depth": stats.Depth,
		}
		var problems []string
		for e := range tx.Check() {
			problems = append(problems, e.Error())
		}
		out["check"] = problems
		return nil
	})
	if err != nil {
		out["error"] = err.Error()
	}
	return out
}

func dumpBucket(b *bolt.Bucket) map[string]interface{} {
	items := [][]interface{}{}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			items = append(items, []interface{}{hex.EncodeToString(k), dumpBucket(b.Bucket(k))})
		} else {
			items = append(items, []interface{}{hex.EncodeToString(k), hex.EncodeToString(v)})
		}
	}
	return map[string]interface{}{"seq": b.Sequence(), "items": items}
}

// scorchIndex builds a small bleve v1.0.14 scorch index in dir over several batches, with
// deletions and updates, and closes it: store/root.bolt is then as scorch leaves it.
func scorchIndex(dir string, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	index, err := bleve.NewUsing(dir, bleve.NewIndexMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return err
	}
	next := 0
	for round := 0; round < 3+rng.Intn(4); round++ {
		batch := index.NewBatch()
		for i := 0; i < 1+rng.Intn(40); i++ {
			var text []string
			for w := 0; w < 1+rng.Intn(12); w++ {
				text = append(text, words[rng.Intn(len(words))])
			}
			id := next
			if next > 0 && rng.Intn(4) == 0 {
				id = rng.Intn(next) // an update
			} else {
				next++
			}
			if err := batch.Index(fmt.Sprintf("doc%05d", id), map[string]interface{}{"text": strings.Join(text, " "), "n": rng.Intn(1000)}); err != nil {
				return err
			}
		}
		for i := 0; i < rng.Intn(5) && next > 0; i++ {
			batch.Delete(fmt.Sprintf("doc%05d", rng.Intn(next)))
		}
		if err := index.Batch(batch); err != nil {
			return err
		}
		if err := index.SetInternal([]byte(fmt.Sprintf("round%d", round)), bytes.Repeat([]byte{byte(round)}, rng.Intn(3000))); err != nil {
			return err
		}
	}
	if err := index.Close(); err != nil {
		return err
	}
	names, _ := filepath.Glob(filepath.Join(dir, "store", "*"))
	sort.Strings(names)
	emit(names)
	return nil
}
