//! Server-sent events read by tests: `GET …/sessions/<id>/events`.

use std::time::Duration;

use serde_json::Value;

/// Server-sent events, parsed as they arrive.
pub struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Read the events of `response`, an open `text/event-stream`.
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event (its JSON data), within 10 s.
    pub async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let frame: String = self.buffer.drain(..end + 2).collect();
                    let data: String = frame
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    if data.is_empty() {
                        continue; // a keep-alive comment
                    }
                    let id = frame
                        .lines()
                        .find_map(|l| l.strip_prefix("id:"))
                        .map(str::trim);
                    let event: Value = serde_json::from_str(&data).unwrap();
                    assert_eq!(
                        id,
                        Some(event["id"].to_string().as_str()),
                        "SSE id = event id"
                    );
                    return event;
                }
                let chunk = self.response.chunk().await.unwrap().expect("stream open");
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .expect("an event within 10 s")
    }

    /// Skip events until one of `kind` arrives.
    pub async fn until(&mut self, kind: &str) -> Value {
        loop {
            let event = self.next().await;
            if event["type"] == kind {
                return event;
            }
        }
    }
}
