module github.com/indexbridge/zapgo

go 1.21

require github.com/blevesearch/bleve v1.0.14

require (
	github.com/blevesearch/go-porterstemmer v1.0.3 // indirect
	github.com/blevesearch/segment v0.9.0 // indirect
	github.com/blevesearch/snowballstem v0.9.0 // indirect
)
