package record

import "time"

// InboxState is what happened to a follow-up message.
type InboxState string

const (
	InboxQueued      InboxState = "queued"
	InboxDelivered   InboxState = "delivered"
	InboxUndelivered InboxState = "undelivered"
)

// InboxEntry is one follow-up a user or orchestrator sent to a session.
type InboxEntry struct {
	ID          string     `json:"id"`
	Seq         int        `json:"seq"`
	Text        string     `json:"text"`
	CreatedAt   time.Time  `json:"created_at"`
	State       InboxState `json:"state"`
	Turn        int        `json:"turn,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	// Interrupt marks a follow-up sent with inject --interrupt: it is
	// delivered before the follow-ups queued without it.
	Interrupt bool `json:"interrupt,omitempty"`
	// TraceParent is the W3C traceparent of what sent it (an
	// orchestrator's converse call): the turn that delivers it links there.
	TraceParent string `json:"trace_parent,omitempty"`
}
