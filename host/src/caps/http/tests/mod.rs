//! Unit tests for the HTTP capability's request hook (no wasm): `egress`
//! (which address is dialed, what is refused, what is counted) and
//! `transport` (TLS, caps, timeouts, slots), against the scripted resolvers
//! and dialers and servers on 127.0.0.1 that `fixtures` holds.

mod egress;
mod fixtures;
mod transport;
