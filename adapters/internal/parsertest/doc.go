// Package parsertest holds what the tests of the adapters' parsers share,
// so that each adapter's tests declare only what is their own: their test
// data, their parser and reference constructors, their edge cases.
//
// It builds on sessionstest, which feeds goldens the way test2json is
// tested, and adds the benchmark over a large turn file.
package parsertest
