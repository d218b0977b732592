// Package agent is the contract between zwarm and an agent CLI: an
// Adapter builds a turn's command line (start, resume, the person's
// interactive CLI) and a Parser turns the agent's output into the
// record's events. Implementations live under adapters/, one package per
// agent; the helpers here (FindBinary, CompactJSON, ContentText) are what
// they share.
package agent
