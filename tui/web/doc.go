// Package web is the swarm in a browser (zwarm serve): the sessions as the
// dashboard lists them, a session's story, its diff, and the actions the
// commands have (a follow-up, a kill), live as they happen.
//
// The page is static (embedded: no build step) and talks to a small JSON
// API under /api; changes reach it as Server-Sent Events from one
// subscription to the state dir, shared by every open page, so an idle
// server with pages open wakes for nothing. Every request carries a token
// in its Authorization header, never in a URL a log would keep: the full
// token may act, the read-only one only look. The event stream, which a
// browser cannot open with a header, takes a ticket instead: single-use,
// short-lived, bought with the token. Requests that change something must
// come from the page's own origin; every text that came from an agent or
// a person is put on the page as text; the headers forbid inline script,
// framing and sniffing. Actions go through the same library calls the
// commands use, so the same rules and errors apply.
package web
