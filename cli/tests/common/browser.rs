//! Debian's headless Chromium, driven over the DevTools protocol
//! (chromiumoxide), for the console's tests. Without Chromium the tests
//! are skipped, except under `CI=true`, where that fails them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::browser::BrowserConfig;
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt as _;

/// Where Debian installs Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";

/// A headless Chromium, closed when dropped.
pub struct Browser {
    browser: chromiumoxide::Browser,
    handler: tokio::task::JoinHandle<()>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start Chromium, or `None` (reported) when it is not installed.
    pub async fn start() -> Option<Self> {
        if !Path::new(CHROMIUM).exists() {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(
                !ci,
                "chromium is not installed (scripts/test installs it: apt-get install chromium)"
            );
            eprintln!("skipped: chromium is not installed (apt-get install chromium)");
            return None;
        }
        let profile = tempfile::tempdir().expect("a profile directory");
        let config = BrowserConfig::builder()
            .chrome_executable(CHROMIUM)
            .user_data_dir(profile.path())
            .no_sandbox()
            .arg("--headless=new")
            .window_size(1200, 900)
            .viewport(None)
            .build()
            .expect("a browser config");
        let (browser, mut events) = chromiumoxide::Browser::launch(config)
            .await
            .expect("chromium starts");
        let handler = tokio::spawn(async move { while events.next().await.is_some() {} });
        Some(Self {
            browser,
            handler,
            _profile: profile,
        })
    }

    /// A new tab showing `url`.
    pub async fn open(&self, url: &str) -> Page {
        let page = self.browser.new_page(url).await.expect("a new tab");
        page.wait_for_navigation().await.expect("the page loads");
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// The value of the JavaScript expression `js` in `page`.
pub async fn eval<T: serde::de::DeserializeOwned>(page: &Page, js: &str) -> T {
    page.evaluate(js)
        .await
        .unwrap_or_else(|e| panic!("{js}: {e}"))
        .into_value()
        .unwrap_or_else(|e| panic!("{js}: {e}"))
}

/// Wait (up to 10 s) until the JavaScript expression `js` is true in `page`.
pub async fn until(page: &Page, js: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !eval::<bool>(page, &format!("!!({js})")).await {
        if tokio::time::Instant::now() > deadline {
            let text: String = eval(page, "document.body.innerText").await;
            panic!("never true: {js}\nthe page shows:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Save a screenshot of `page` as `target/console-screenshots/<name>.png`
/// (a CI artifact).
pub async fn screenshot(page: &Page, name: &str) -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
            PathBuf::from,
        )
        .join("console-screenshots");
    std::fs::create_dir_all(&dir).expect("the screenshots folder");
    let path = dir.join(format!("{name}.png"));
    let png = page
        .screenshot(ScreenshotParams::builder().full_page(true).build())
        .await
        .expect("a screenshot");
    std::fs::write(&path, png).expect("the screenshot is saved");
    path
}
