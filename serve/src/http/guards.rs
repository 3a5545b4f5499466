//! The checks every request passes before its route: the bearer token,
//! a loopback `Host` on a loopback address, and no cross-site writes.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, App};

pub(super) async fn require_token(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &app.options.token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is wrong",
        )
        .into_response(),
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this server needs `Authorization: Bearer <token>`",
        )
        .into_response(),
    }
}

/// On a loopback address every request must name a loopback host: a web
/// page whose own name was rebound to 127.0.0.1 (DNS rebinding) sends that
/// name and is refused, so it cannot call tools through a browser.
pub(super) async fn require_loopback_host(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    if !app.options.listen.ip().is_loopback() {
        return next.run(request).await;
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default();
    if is_loopback_host(host) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::FORBIDDEN,
        "host_not_allowed",
        format!(
            "Host {host:?} is not a loopback name: a server on a loopback address answers \
             only requests for localhost, 127.0.0.1 or [::1]"
        ),
    )
    .into_response()
}

/// Refuse a request that changes state when a browser says another site
/// sent it (`Sec-Fetch-Site: cross-site` or `same-site`, or, from a browser
/// that does not send that, an `Origin` other than the server's own): a
/// page elsewhere cannot use a visitor's browser to call tools. `/mcp` checks origins itself (`[server]
/// allowed_origins`).
pub(super) async fn refuse_cross_site(request: Request, next: Next) -> Response {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if safe || request.uri().path() == "/mcp" {
        return next.run(request).await;
    }
    let headers = request.headers();
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    // A browser that sends `Sec-Fetch-Site` says where the request comes
    // from, and its word stands (behind a proxy `Host` is the proxy's
    // upstream, not what the page's `Origin` names). An older browser
    // sends only `Origin`, compared with `Host`.
    let cross_site = match text("sec-fetch-site") {
        Some(site) => matches!(site, "cross-site" | "same-site"),
        None => text(header::ORIGIN.as_str()).is_some_and(|origin| {
            let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            origin == "null" || Some(authority) != text(header::HOST.as_str())
        }),
    };
    if cross_site {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_site_request",
            "a request that changes state must come from this server's own pages, or from a \
             client that is not a browser page on another site",
        )
        .into_response();
    }
    next.run(request).await
}

/// Whether `authority` (`name[:port]`) names this machine.
fn is_loopback_host(authority: &str) -> bool {
    let name = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
