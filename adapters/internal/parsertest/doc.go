// Package parsertest holds what the tests of the adapters' parsers share,
// so that each adapter's tests declare only what is their own: their test
// data, their parser and reference constructors, their edge cases.
//
// Goldens feeds the package's testdata the way test2json is tested
// (sessionstest does the feeding); Typed and FuzzParseLine check that no
// line, however broken, makes an event without a type; MatchesReference
// and FuzzMatchesReference compare a parser with the encoding/json parser
// it replaced, on the test data, its mutations and tricky lines;
// BenchParse times a large turn file.
package parsertest
