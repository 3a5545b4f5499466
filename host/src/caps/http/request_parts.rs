//! The parts of an outgoing request the host keeps as a guest gives them,
//! bounded: `wasi:http/types`' `set-method` and `set-authority` store a
//! string of any length on the request (`http` caps a path, not a method or
//! an authority), for as many requests as the guest holds handles. These
//! two are served here, refusing (the interface's `err`) what no server
//! would take, then handed to wasmtime-wasi-http as they were.

use wasmtime::component::{Linker, Resource};
use wasmtime_wasi_http::p2::bindings::http::types::{HostOutgoingRequest, Method};
use wasmtime_wasi_http::p2::types::HostOutgoingRequest as Request;
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

/// The longest method a request may have, in bytes (`PROPPATCH` is 9).
pub const MAX_METHOD_BYTES: usize = 64;
/// The longest authority (`user:pass@host:port`) a request may have, in
/// bytes: a DNS name is at most 253.
pub const MAX_AUTHORITY_BYTES: usize = 1024;

/// Serve `set-method` and `set-authority` of `interface` (the
/// `wasi:http/types` instance wasmtime-wasi-http linked) from this module:
/// call after wasmtime-wasi-http's `add_to_linker`.
pub fn add_to_linker<T: WasiHttpView + Send + 'static>(
    linker: &mut Linker<T>,
    interface: &str,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let shadowed = shadow(linker, interface);
    linker.allow_shadowing(false);
    shadowed
}

fn shadow<T: WasiHttpView + Send + 'static>(
    linker: &mut Linker<T>,
    interface: &str,
) -> wasmtime::Result<()> {
    let mut types = linker.instance(interface)?;
    types.func_wrap(
        "[method]outgoing-request.set-method",
        |mut store, (request, method): (Resource<Request>, Method)| {
            if matches!(&method, Method::Other(name) if name.len() > MAX_METHOD_BYTES) {
                return Ok((Err(()),));
            }
            let mut view: WasiHttpCtxView<'_> = store.data_mut().http();
            Ok((view.set_method(request, method)?,))
        },
    )?;
    types.func_wrap(
        "[method]outgoing-request.set-authority",
        |mut store, (request, authority): (Resource<Request>, Option<String>)| {
            if authority
                .as_ref()
                .is_some_and(|text| text.len() > MAX_AUTHORITY_BYTES)
            {
                return Ok((Err(()),));
            }
            let mut view: WasiHttpCtxView<'_> = store.data_mut().http();
            Ok((view.set_authority(request, authority)?,))
        },
    )?;
    Ok(())
}
