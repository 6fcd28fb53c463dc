// Index-level modes: bleve v1.0.14 (scorch, zap v11) builds, updates, maps and searches whole
// index directories, so the tests can hold indexbridge.bleve to what bleve does.
//
//	boltgo bleve-build DIR JOB.json       a new index (bleve.NewUsing scorch, one batch per op,
//	                                      never merged on its own; or
//	                                      bleve.NewBuilder with "builder": true)
//	boltgo bleve-update DIR JOB.json      open DIR read-write, apply the ops, force-merge with
//	                                      "merge": true; close
//	boltgo bleve-answer DIR QUERIES.json [nodocs]
//	                                      open DIR read-only: doc count, every live document's
//	                                      stored fields (not with nodocs), each query's total and
//	                                      hits (id, score)
//	boltgo bleve-segment JOB.json OUT.zap the documents mapped by the mapping and analysed as
//	                                      scorch does, in the given order, written by zap v11
//	boltgo bleve-mapping MAPPINGS.json    each mapping as bleve parses, validates and marshals it
//	boltgo bleve-dates STRINGS.json       dateTimeOptional's UnixNano of each string (or null)
//	boltgo bleve-bench JOB.json DIR       batch-index the documents (batches of "batch_size")
//	                                      into a new index; prints the seconds it took
//	boltgo bleve-search-bench DIR QUERIES.json ROUNDS
//	                                      each query's best time over ROUNDS (every hit), and total
//
// JOB.json: {"mapping": mapping JSON or null, "ops": [{"index": [[id, doc], ...], "delete":
// [id, ...]}], "builder": bool, "batch_size": n, "merge": bool, "docs": [[id, doc], ...]}.
// The keyword, simple and standard analyzers are imported (a Go program opening an index whose
// mapping names keyword or simple must import them, or bleve/config, as here).
// Documents keep their JSON key order in bleve-segment (they become structs, which bleve's
// mapping walks in field order; Go walks a map in random order).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"time"

	"github.com/blevesearch/bleve"
	_ "github.com/blevesearch/bleve/analysis/analyzer/keyword"
	_ "github.com/blevesearch/bleve/analysis/analyzer/simple"
	_ "github.com/blevesearch/bleve/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/document"
	"github.com/blevesearch/bleve/index"
	"github.com/blevesearch/bleve/index/scorch"
	"github.com/blevesearch/bleve/mapping"
	"github.com/blevesearch/bleve/search/query"
	zap "github.com/blevesearch/zap/v11"
)

type indexOp struct {
	Index  [][]json.RawMessage `json:"index"`
	Delete []string            `json:"delete"`
}

type indexJob struct {
	Mapping   json.RawMessage     `json:"mapping"`
	Ops       []indexOp           `json:"ops"`
	Builder   bool                `json:"builder"`
	BatchSize int                 `json:"batch_size"`
	Merge     bool                `json:"merge"`
	Docs      [][]json.RawMessage `json:"docs"`
}

func bleveMain(args []string) bool {
	switch args[0] {
	case "bleve-build":
		check(bleveBuild(args[1], readJob(args[2])))
	case "bleve-update":
		check(bleveUpdate(args[1], readJob(args[2])))
	case "bleve-answer":
		check(bleveAnswer(args[1], args[2], len(args) > 3 && args[3] == "nodocs"))
	case "bleve-segment":
		check(bleveSegment(readJob(args[1]), args[2]))
	case "bleve-mapping":
		check(bleveMappings(args[1]))
	case "bleve-dates":
		check(bleveDates(args[1]))
	case "bleve-bench":
		check(bleveBench(readJob(args[1]), args[2]))
	case "bleve-search-bench":
		var rounds int
		_, err := fmt.Sscan(args[3], &rounds)
		check(err)
		check(bleveSearchBench(args[1], args[2], rounds))
	default:
		return false
	}
	return true
}

func readJob(path string) *indexJob {
	data, err := os.ReadFile(path)
	check(err)
	var j indexJob
	check(json.Unmarshal(data, &j))
	return &j
}

func parseMapping(raw json.RawMessage) (*mapping.IndexMappingImpl, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return bleve.NewIndexMapping(), nil
	}
	var im *mapping.IndexMappingImpl
	if err := json.Unmarshal(raw, &im); err != nil {
		return nil, err
	}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	return im, nil
}

func decodeDoc(pair []json.RawMessage) (string, interface{}, error) {
	var id string
	if err := json.Unmarshal(pair[0], &id); err != nil {
		return "", nil, err
	}
	var doc interface{}
	if err := json.Unmarshal(pair[1], &doc); err != nil {
		return "", nil, err
	}
	return id, doc, nil
}

func applyOps(idx bleve.Index, ops []indexOp) error {
	for _, op := range ops {
		batch := idx.NewBatch()
		for _, pair := range op.Index {
			id, doc, err := decodeDoc(pair)
			if err != nil {
				return err
			}
			if err := batch.Index(id, doc); err != nil {
				return err
			}
		}
		for _, id := range op.Delete {
			batch.Delete(id)
		}
		if err := idx.Batch(batch); err != nil {
			return err
		}
	}
	return nil
}

func bleveBuild(dir string, j *indexJob) error {
	im, err := parseMapping(j.Mapping)
	if err != nil {
		return err
	}
	if j.Builder {
		config := map[string]interface{}{}
		if j.BatchSize > 0 {
			config["batchSize"] = j.BatchSize
		}
		b, err := bleve.NewBuilder(dir, im, config)
		if err != nil {
			return err
		}
		for _, op := range j.Ops {
			for _, pair := range op.Index {
				id, doc, err := decodeDoc(pair)
				if err != nil {
					return err
				}
				if err := b.Index(id, doc); err != nil {
					return err
				}
			}
		}
		return b.Close()
	}
	// scorch merges batches on its own, depending on timing, and drops the deleted documents a
	// test wants to see, in two places. The merger's plan takes only segments of fewer than
	// MaxSegmentSize/2 live documents: with 1, none (a budget of segments per tier does not
	// stop it, for an index under FloorSegmentSize documents has a budget of one segment).
	// The persister merges the in-memory segments it finds unpersisted, two or more at once;
	// its threshold is a package variable.
	config := map[string]interface{}{"scorchMergePlanOptions": map[string]interface{}{"MaxSegmentSize": 1}}
	scorch.DefaultMinSegmentsForInMemoryMerge = math.MaxInt32
	idx, err := bleve.NewUsing(dir, im, scorch.Name, scorch.Name, config)
	if err != nil {
		return err
	}
	if err := applyOps(idx, j.Ops); err != nil {
		return err
	}
	return finish(idx, j.Merge)
}

func bleveUpdate(dir string, j *indexJob) error {
	idx, err := bleve.Open(dir)
	if err != nil {
		return err
	}
	if err := applyOps(idx, j.Ops); err != nil {
		return err
	}
	return finish(idx, j.Merge)
}

// finish force-merges (scorch's merger runs over every segment) and closes. The DeleteInternal
// after the merge is a batch: scorch persists its snapshot, the merged one, before returning.
func finish(idx bleve.Index, merge bool) error {
	if merge {
		adv, _, err := idx.Advanced()
		if err != nil {
			return err
		}
		s, ok := adv.(*scorch.Scorch)
		if !ok {
			return fmt.Errorf("not a scorch index: %T", adv)
		}
		if err := s.ForceMerge(context.Background(), nil); err != nil {
			return err
		}
		if err := idx.DeleteInternal([]byte("indexbridge-sync")); err != nil {
			return err
		}
	}
	return idx.Close()
}

type answer struct {
	Total uint64          `json:"total"`
	Hits  [][]interface{} `json:"hits"`
	Error string          `json:"error,omitempty"`
}

func searchAll(idx bleve.Index, raw json.RawMessage, size int) answer {
	q, err := query.ParseQuery(raw)
	if err != nil {
		return answer{Error: err.Error()}
	}
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	if err := req.Validate(); err != nil {
		return answer{Error: err.Error()}
	}
	res, err := idx.Search(req)
	if err != nil {
		return answer{Error: err.Error()}
	}
	out := answer{Total: res.Total, Hits: [][]interface{}{}}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, []interface{}{h.ID, h.Score})
	}
	return out
}

// openForQueries reads a JSON array of queries and opens the index read-only (bleve then
// changes nothing in the directory); the index's document count.
func openForQueries(dir, queriesPath string) ([]json.RawMessage, bleve.Index, uint64, error) {
	data, err := os.ReadFile(queriesPath)
	if err != nil {
		return nil, nil, 0, err
	}
	var queries []json.RawMessage
	if err := json.Unmarshal(data, &queries); err != nil {
		return nil, nil, 0, err
	}
	idx, err := bleve.OpenUsing(dir, map[string]interface{}{"read_only": true})
	if err != nil {
		return nil, nil, 0, err
	}
	count, err := idx.DocCount()
	if err != nil {
		_ = idx.Close()
		return nil, nil, 0, err
	}
	return queries, idx, count, nil
}

func bleveAnswer(dir, queriesPath string, noDocs bool) error {
	queries, idx, count, err := openForQueries(dir, queriesPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	size := int(count) + 1
	docs := map[string]interface{}{}
	order := []string{}
	all := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), size, 0, false)
	all.Fields = []string{"*"}
	if noDocs {
		all = bleve.NewSearchRequestOptions(bleve.NewMatchNoneQuery(), 1, 0, false)
	}
	res, err := idx.Search(all)
	if err != nil {
		return err
	}
	for _, h := range res.Hits {
		fields := h.Fields
		if fields == nil {
			fields = map[string]interface{}{}
		}
		docs[h.ID] = fields
		order = append(order, h.ID)
	}
	answers := []answer{}
	for _, raw := range queries {
		answers = append(answers, searchAll(idx, raw, size))
	}
	emit(map[string]interface{}{"doc_count": count, "docs": docs, "order": order, "answers": answers,
		"mapping": idx.Mapping()})
	return nil
}

// orderedValue decodes one JSON value keeping object key order: objects become structs whose
// fields bleve's mapping walks in declaration order, named by their json tags.
func orderedValue(dec *json.Decoder) (interface{}, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var fields []reflect.StructField
			var values []interface{}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)),
					Type: reflect.TypeOf((*interface{})(nil)).Elem(),
					Tag:  reflect.StructTag(fmt.Sprintf(`json:%s`, strconv.Quote(keyTok.(string))))})
				values = append(values, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			sv := reflect.New(reflect.StructOf(fields)).Elem()
			for i, v := range values {
				if v != nil {
					sv.Field(i).Set(reflect.ValueOf(v))
				}
			}
			return sv.Interface(), nil
		case '[':
			arr := []interface{}{}
			for dec.More() {
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
	case json.Number:
		return t.Float64()
	}
	return tok, nil
}

func bleveSegment(j *indexJob, out string) error {
	im, err := parseMapping(j.Mapping)
	if err != nil {
		return err
	}
	s, err := scorch.NewScorch("boltgo", map[string]interface{}{"path": ""}, nil)
	if err != nil {
		return err
	}
	var results []*index.AnalysisResult
	for _, pair := range j.Docs {
		var id string
		if err := json.Unmarshal(pair[0], &id); err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(pair[1]))
		dec.UseNumber()
		data, err := orderedValue(dec)
		if err != nil {
			return err
		}
		doc := document.NewDocument(id)
		if err := im.MapDocument(doc, data); err != nil {
			return err
		}
		doc.AddField(document.NewTextFieldCustom("_id", nil, []byte(doc.ID), document.IndexField|document.StoreField, nil))
		results = append(results, s.Analyze(doc))
	}
	var plugin zap.ZapPlugin
	seg, _, err := plugin.New(results)
	if err != nil {
		return err
	}
	return zap.PersistSegmentBase(seg.(*zap.SegmentBase), out)
}

func bleveMappings(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	var out []map[string]interface{}
	for _, raw := range raws {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
		im, err := parseMapping(json.RawMessage(text))
		if err != nil {
			out = append(out, map[string]interface{}{"error": err.Error()})
			continue
		}
		marshaled, err := json.Marshal(im)
		if err != nil {
			out = append(out, map[string]interface{}{"error": err.Error()})
			continue
		}
		out = append(out, map[string]interface{}{"json": string(marshaled)})
	}
	emit(out)
	return nil
}

func bleveDates(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var values []string
	if err := json.Unmarshal(data, &values); err != nil {
		return err
	}
	parser := bleve.NewIndexMapping().DateTimeParserNamed("dateTimeOptional")
	var out []interface{}
	for _, v := range values {
		t, err := parser.ParseDateTime(v)
		if err != nil || t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
			out = append(out, nil)
			continue
		}
		out = append(out, strconv.FormatInt(t.UnixNano(), 10))
	}
	emit(out)
	return nil
}

// bleveBench batch-indexes the documents into a new scorch index, as a bleve service would.
func bleveBench(j *indexJob, dir string) error {
	im, err := parseMapping(j.Mapping)
	if err != nil {
		return err
	}
	type pair struct {
		id  string
		doc interface{}
	}
	docs := make([]pair, 0, len(j.Docs))
	for _, p := range j.Docs {
		id, doc, err := decodeDoc(p)
		if err != nil {
			return err
		}
		docs = append(docs, pair{id, doc})
	}
	batchSize := j.BatchSize
	if batchSize <= 0 {
		batchSize = 10000
	}
	start := time.Now()
	idx, err := bleve.NewUsing(dir, im, scorch.Name, scorch.Name, nil)
	if err != nil {
		return err
	}
	for i := 0; i < len(docs); i += batchSize {
		batch := idx.NewBatch()
		for _, p := range docs[i:min(i+batchSize, len(docs))] {
			if err := batch.Index(p.id, p.doc); err != nil {
				return err
			}
		}
		if err := idx.Batch(batch); err != nil {
			return err
		}
	}
	if err := idx.Close(); err != nil {
		return err
	}
	emit(map[string]interface{}{"seconds": time.Since(start).Seconds(), "docs": len(docs)})
	return nil
}

// bleveSearchBench times each query (every hit, as indexbridge's search returns them) on an
// index opened read-only: the best of rounds, in seconds.
func bleveSearchBench(dir, queriesPath string, rounds int) error {
	queries, idx, count, err := openForQueries(dir, queriesPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	var out []map[string]interface{}
	for _, raw := range queries {
		q, err := query.ParseQuery(raw)
		if err != nil {
			return err
		}
		best := math.Inf(1)
		var total uint64
		for r := 0; r < rounds; r++ {
			start := time.Now()
			res, err := idx.Search(bleve.NewSearchRequestOptions(q, int(count)+1, 0, false))
			if err != nil {
				return err
			}
			best = math.Min(best, time.Since(start).Seconds())
			total = res.Total
		}
		out = append(out, map[string]interface{}{"seconds": best, "total": total})
	}
	emit(out)
	return nil
}
