package main

import "github.com/spf13/cobra"

// A command is one of zwarm's commands: the names it is run by (its name,
// then its aliases) and its constructor.
type command struct {
	names []string
	make  func(*factory) *cobra.Command
}

// commandTable is every command, in the order help lists them. A test
// holds each entry's names to what its constructor makes.
var commandTable = []command{
	{[]string{"spawn"}, newSpawnCmd},
	{[]string{"ls", "list"}, func(f *factory) *cobra.Command { return newLsCmd(f, nil) }},
	{[]string{"show"}, func(f *factory) *cobra.Command { return newShowCmd(f, nil) }},
	{[]string{"logs"}, func(f *factory) *cobra.Command { return newLogsCmd(f, nil) }},
	{[]string{"inject", "continue"}, newInjectCmd},
	{[]string{"attach"}, newAttachCmd},
	{[]string{"wait"}, newWaitCmd},
	{[]string{"kill"}, newKillCmd},
	{[]string{"rm"}, func(f *factory) *cobra.Command { return newRmCmd(f, nil) }},
	{[]string{"clean"}, newCleanCmd},
	{[]string{"dash"}, newDashCmd},
	{[]string{"demo"}, newDemoCmd},
	{[]string{"diff"}, newDiffCmd},
	{[]string{"land"}, newLandCmd},
	{[]string{"update"}, newUpdateCmd},
	{[]string{"orchestrate"}, newOrchestrateCmd},
	{[]string{"pilot"}, newPilotCmd},
	{[]string{"runs"}, func(f *factory) *cobra.Command { return newRunsCmd(f, nil) }},
	{[]string{"watch"}, newWatchCmd},
	{[]string{"mcp"}, newMCPCmd},
	{[]string{"trace"}, newTraceCmd},
	{[]string{"serve"}, newServeCmd},
	{[]string{"init"}, newInitCmd},
	{[]string{"doctor"}, func(f *factory) *cobra.Command { return newDoctorCmd(f, nil) }},
	{[]string{"version"}, newVersionCmd},
	{[]string{"__supervise"}, newSuperviseCmd},
	{[]string{"__replay"}, newReplayCmd},
	{[]string{"__notify"}, newNotifyCmd},
}

// commandNamed is the constructor of the command called name, nil when
// there is none.
func commandNamed(name string) func(*factory) *cobra.Command {
	for _, c := range commandTable {
		for _, n := range c.names {
			if n == name {
				return c.make
			}
		}
	}
	return nil
}

// readsRecords reports whether the command called name reads session
// records, so that their reading is readied while its line is parsed
// (sessions.Prepare): all but a few do.
func readsRecords(name string) bool {
	switch name {
	case "version", "init", "__notify":
		return false
	}
	return commandNamed(name) != nil
}
