package telemetry

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span is a span made whole: what it stands for has ended.
type Span struct {
	Trace  trace.TraceID
	ID     trace.SpanID
	Parent trace.SpanID // zero for the trace's root
	Name   string
	Kind   trace.SpanKind
	Start  time.Time
	End    time.Time
	Attrs  []attribute.KeyValue
	Events []Event
	Links  []trace.SpanContext
	// Error, when set, is the error.type of a span that failed, and its
	// status.
	Error string
}

// Event is a moment inside a span.
type Event struct {
	Name  string
	Time  time.Time
	Attrs []attribute.KeyValue
}

// The GenAI semantic conventions' attributes zwarm sets.
const (
	OperationName  = attribute.Key("gen_ai.operation.name")
	ProviderName   = attribute.Key("gen_ai.provider.name")
	AgentName      = attribute.Key("gen_ai.agent.name")
	AgentID        = attribute.Key("gen_ai.agent.id")
	RequestModel   = attribute.Key("gen_ai.request.model")
	InputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	ToolName       = attribute.Key("gen_ai.tool.name")
	ToolCallID     = attribute.Key("gen_ai.tool.call.id")
	ToolType       = attribute.Key("gen_ai.tool.type")
	ConversationID = attribute.Key("gen_ai.conversation.id")
	ErrorType      = attribute.Key("error.type")
)

// The operations (gen_ai.operation.name) of zwarm's spans.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)
