//! The listener of `toolhost serve`: binding, taking connections within
//! their bounds, and shutting down gracefully.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use toolhost::config::MIN_TOKEN_CHARS;
use toolhost::host::Host;

use super::{App, ServeOptions, reminders, router};

/// Serve `host` on `options.listen` until `shutdown` resolves; calls in
/// flight get `options.shutdown_grace` to finish.
pub async fn serve(
    host: Arc<Host>,
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = bind(&options).await?;
    let app = App::new(host, options)?;
    run(listener, app, shutdown).await
}

/// Bind the listen address, refusing a non-loopback one without a token.
pub async fn bind(options: &ServeOptions) -> anyhow::Result<tokio::net::TcpListener> {
    anyhow::ensure!(
        options.listen.ip().is_loopback() || options.token.is_some(),
        "refusing to listen on {} without a token: anyone who can reach it could run tools. \
         Set one with --token, TOOLHOST_TOKEN or [server] token, or listen on 127.0.0.1",
        options.listen
    );
    if let Some(token) = &options.token {
        anyhow::ensure!(
            token.len() >= MIN_TOKEN_CHARS,
            "the token is too short: use at least {MIN_TOKEN_CHARS} characters"
        );
    }
    tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))
}

/// Serve `app` on an already bound listener until `shutdown` resolves.
/// From then on no connection is accepted; requests in flight get
/// `shutdown_grace` to finish, and whatever still runs after it is dropped.
pub async fn run(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // Sessions kept from before a restart may be bound to versions the
    // tools folder no longer gives: load those again, beside serving.
    let restoring = app.host.clone();
    let restore = tokio::spawn(async move { restoring.restore_pinned_versions().await });
    let sweeper = {
        let app = app.clone();
        let every = (app.options.session_retention / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                app.sweep().await;
            }
        })
    };
    let reminders = tokio::spawn(app.host.clone().fire_reminders(Arc::new(
        reminders::BoardReminderCalls(Arc::downgrade(&app)),
    )));
    // What runs beside the server stops with it, even when the future
    // running the server is dropped rather than shut down.
    let _beside = AbortOnDrop([
        restore.abort_handle(),
        sweeper.abort_handle(),
        reminders.abort_handle(),
    ]);
    let cancel = app.shutdown.clone();
    let (host, grace) = (app.host.clone(), app.options.shutdown_grace);
    let connections = Connections::new(&app.options);
    let service = router(app);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = connections.accept(&listener) => {
                let (stream, permit) = accepted;
                let connection = connections.serve(stream, service.clone());
                let watched = graceful.watch(connection);
                tokio::spawn(async move {
                    // A client that breaks the protocol or times out ends
                    // only its own connection.
                    let _ = watched.await;
                    drop(permit);
                });
            }
        }
    }
    drop(listener);
    cancel.cancel();
    let outcome = tokio::select! {
        () = graceful.shutdown() => Ok(()),
        () = tokio::time::sleep(grace) => {
            tracing::warn!(
                running = host.gate().running(),
                queued = host.gate().waiting(),
                "requests still in flight after the {} s shutdown grace (shutdown_grace_secs) are dropped",
                grace.as_secs()
            );
            Ok(())
        }
    };
    sweeper.abort();
    reminders.abort();
    restore.abort();
    outcome
}

/// Aborts its tasks when dropped.
struct AbortOnDrop<const N: usize>([tokio::task::AbortHandle; N]);

impl<const N: usize> Drop for AbortOnDrop<N> {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// How `serve` takes connections: at most `max_connections` at once (more
/// wait in the kernel's listen backlog), each with a header and a body
/// read timeout, so slow or idle clients cannot hold the server.
struct Connections {
    slots: Arc<tokio::sync::Semaphore>,
    http: hyper::server::conn::http1::Builder,
    body_read_timeout: Duration,
}

/// How long `accept` backs off after an error such as running out of
/// descriptors, instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

impl Connections {
    fn new(options: &ServeOptions) -> Self {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(options.header_read_timeout);
        Self {
            slots: Arc::new(tokio::sync::Semaphore::new(options.max_connections)),
            http,
            body_read_timeout: options.body_read_timeout,
        }
    }

    /// The next connection, once a slot is free for it.
    async fn accept(
        &self,
        listener: &tokio::net::TcpListener,
    ) -> (tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit) {
        let Ok(permit) = self.slots.clone().acquire_owned().await else {
            unreachable!("the connection semaphore is never closed")
        };
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    // Streamed answers (MCP's SSE, event streams) go out in
                    // small writes: without this, each waits on the
                    // client's delayed ACK (~40 ms on Linux).
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::debug!("cannot set TCP_NODELAY: {e}");
                    }
                    return (stream, permit);
                }
                Err(e) => {
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        }
    }

    /// Serve one connection with `router`, every request body under the
    /// body read timeout.
    fn serve(
        &self,
        stream: tokio::net::TcpStream,
        router: Router,
    ) -> impl hyper_util::server::graceful::GracefulConnection + use<> {
        let timeout = self.body_read_timeout;
        let service =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let request = request.map(|body| {
                    axum::body::Body::new(tower_http::timeout::TimeoutBody::new(timeout, body))
                });
                tower::ServiceExt::oneshot(router.clone(), request)
            });
        self.http
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
    }
}
