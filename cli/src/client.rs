//! `toolhost tool call --url`: call a tool on a running `toolhost serve`.

use std::time::Duration;

use anyhow::Context as _;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// How long one long-poll for a waiting call's result lasts.
const POLL_WAIT_SECS: u32 = 30;

/// A client of one server.
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

/// A call's answer from the server.
pub enum Answer {
    /// The call ran: its envelope.
    Envelope(Value),
    /// The call was refused: the status and the error object.
    Refused(StatusCode, Value),
}

impl Client {
    /// A client of the server at `url` (scheme, host and port).
    pub fn new(url: &str, token: Option<String>) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(toolhost::caps::http::client_tls_config()?)
            .connect_timeout(Duration::from_secs(10))
            // The server is named by `--url`: a proxy from the environment
            // would see the bearer token.
            .no_proxy()
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Self {
            http,
            base: url.trim_end_matches('/').to_string(),
            token,
        })
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.authorized(self.http.get(format!("{}{path}", self.base)))
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// The slug the server's routes live under.
    pub async fn slug(&self) -> anyhow::Result<String> {
        let health: Value = self
            .get("/healthz")
            .send()
            .await
            .with_context(|| format!("cannot reach {}", self.base))?
            .error_for_status()?
            .json()
            .await
            .context("the server's /healthz is not toolhost's")?;
        health["slug"]
            .as_str()
            .map(str::to_string)
            .context("the server's /healthz names no slug: is it a toolhost server?")
    }

    /// Call `tool` and, if the call waits (approval, custom tool), poll
    /// until it finishes, telling `waiting` what it waits for.
    pub async fn call(
        &self,
        tool: &str,
        body: Value,
        waiting: impl Fn(&Value),
    ) -> anyhow::Result<Answer> {
        let slug = self.slug().await?;
        let response = self
            .authorized(
                self.http
                    .post(format!("{}/{slug}/v1/tools/{tool}", self.base))
                    .json(&body),
            )
            .send()
            .await
            .with_context(|| format!("cannot reach {}", self.base))?;
        let mut answer = read(response).await?;
        loop {
            match answer {
                (StatusCode::ACCEPTED, pending) => {
                    waiting(&pending);
                    let call_id = pending["callId"].as_str().unwrap_or_default();
                    let path = format!("/{slug}/v1/calls/{call_id}?wait={POLL_WAIT_SECS}");
                    answer = read(self.get(&path).send().await?).await?;
                }
                (StatusCode::OK, envelope) => return Ok(Answer::Envelope(envelope)),
                (status, body) => return Ok(Answer::Refused(status, body["error"].clone())),
            }
        }
    }
}

async fn read(response: reqwest::Response) -> anyhow::Result<(StatusCode, Value)> {
    let status = response.status();
    let text = response.text().await?;
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| json!({ "error": { "code": "not_json", "message": text } }));
    Ok((status, body))
}
