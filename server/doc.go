// Package server is the server itself: its Config, read once from the
// environment and validated, and Run, which wires the store, the Lanes, the
// owner notices and the pages together and owns the shutdown order.
//
// Run takes its context, its environment (getenv) and its writers as
// arguments, and the package keeps no state of its own between calls, so
// `mangabookmark serve`, the demo (with Options of its own) and the tests all
// run the one server.
package server
