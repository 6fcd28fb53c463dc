// bleve2: today's bleve (github.com/blevesearch/bleve/v2) against indexbridge's index
// directories. It is a module of its own: bleve v2 needs newer bbolt and roaring than the
// v1.0.14 pins of integration/boltgo.
//
//	bleve2 answer DIR QUERIES.json   open DIR read-only: doc count, every live document's stored
//	                                 fields, each query's total and hits (id, score); the same
//	                                 JSON as boltgo bleve-answer
//	bleve2 build DIR JOB.json        a new index as bleve v2 writes it by default (zap v16/v17
//	                                 segments); JOB as boltgo's: {"mapping", "ops"}
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/simple"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bleve2:", err)
		os.Exit(1)
	}
}

func emit(v interface{}) {
	out, err := json.Marshal(v)
	check(err)
	_, err = os.Stdout.Write(append(out, '\n'))
	check(err)
}

type indexOp struct {
	Index  [][]json.RawMessage `json:"index"`
	Delete []string            `json:"delete"`
}

type indexJob struct {
	Mapping json.RawMessage `json:"mapping"`
	Ops     []indexOp       `json:"ops"`
}

type answer struct {
	Total uint64          `json:"total"`
	Hits  [][]interface{} `json:"hits"`
	Error string          `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 4 {
		check(fmt.Errorf("usage: bleve2 answer DIR QUERIES.json | build DIR JOB.json"))
	}
	switch os.Args[1] {
	case "answer":
		check(answerAll(os.Args[2], os.Args[3]))
	case "build":
		check(build(os.Args[2], os.Args[3]))
	default:
		check(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func answerAll(dir, queriesPath string) error {
	data, err := os.ReadFile(queriesPath)
	if err != nil {
		return err
	}
	var queries []json.RawMessage
	if err := json.Unmarshal(data, &queries); err != nil {
		return err
	}
	idx, err := bleve.OpenUsing(dir, map[string]interface{}{"read_only": true})
	if err != nil {
		return err
	}
	defer idx.Close()
	count, err := idx.DocCount()
	if err != nil {
		return err
	}
	size := int(count) + 1
	all := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), size, 0, false)
	all.Fields = []string{"*"}
	res, err := idx.Search(all)
	if err != nil {
		return err
	}
	docs := map[string]interface{}{}
	order := []string{}
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
		q, err := query.ParseQuery(raw)
		if err != nil {
			answers = append(answers, answer{Error: err.Error()})
			continue
		}
		req := bleve.NewSearchRequestOptions(q, size, 0, false)
		if err := req.Validate(); err != nil {
			answers = append(answers, answer{Error: err.Error()})
			continue
		}
		r, err := idx.Search(req)
		if err != nil {
			answers = append(answers, answer{Error: err.Error()})
			continue
		}
		a := answer{Total: r.Total, Hits: [][]interface{}{}}
		for _, h := range r.Hits {
			a.Hits = append(a.Hits, []interface{}{h.ID, h.Score})
		}
		answers = append(answers, a)
	}
	emit(map[string]interface{}{"doc_count": count, "docs": docs, "order": order, "answers": answers})
	return nil
}

func build(dir, jobPath string) error {
	data, err := os.ReadFile(jobPath)
	if err != nil {
		return err
	}
	var j indexJob
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	im := bleve.NewIndexMapping()
	if len(j.Mapping) > 0 && string(j.Mapping) != "null" {
		var parsed *mapping.IndexMappingImpl
		if err := json.Unmarshal(j.Mapping, &parsed); err != nil {
			return err
		}
		im = parsed
	}
	idx, err := bleve.New(dir, im)
	if err != nil {
		return err
	}
	for _, op := range j.Ops {
		batch := idx.NewBatch()
		for _, pair := range op.Index {
			var id string
			var doc interface{}
			if err := json.Unmarshal(pair[0], &id); err != nil {
				return err
			}
			if err := json.Unmarshal(pair[1], &doc); err != nil {
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
	return idx.Close()
}
