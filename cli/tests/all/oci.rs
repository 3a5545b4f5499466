//! Tools in OCI registries: `toolhost publish` against a real registry
//! (Debian's `docker-registry`, started on a random loopback port), read
//! back by `skopeo`, and a component another client pushed pulled by the
//! host; a hostile registry's answers (wrong types, oversized, wrong
//! bytes, redirects) refused with nothing cached. Without `docker-registry`
//! or `skopeo` the tests skip, and with `CI=true` that is a failure.

use crate::common;
use crate::common::server::{Server, reply};

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::net::TcpStream;
use toolhost::caps::http::{BoxFuture, Dialer, Network, Resolver};
use toolhost::oci::{self, Cache, Credentials, Digest, Reference};

/// A registry on a random loopback port, stopped when dropped.
struct Registry {
    child: std::process::Child,
    /// The address it listens on.
    host: String,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Started, or `None` (skipped) where `docker-registry` or `skopeo` is
    /// missing, unless in CI.
    fn start() -> Option<Self> {
        Self::start_with(None)
    }

    /// The same, asking for Basic credentials (`user`, `password`) when
    /// given.
    fn start_with(login: Option<(&str, &str)>) -> Option<Self> {
        Self::start_at("127.0.0.1", login)
    }

    /// The same, listening on `host` (an address of this machine).
    fn start_at(host: &str, login: Option<(&str, &str)>) -> Option<Self> {
        let mut needed = vec!["docker-registry", "skopeo"];
        if login.is_some() {
            needed.push("htpasswd");
        }
        let missing: Vec<&str> = needed
            .into_iter()
            .filter(|tool| {
                Command::new(tool)
                    .arg(if *tool == "htpasswd" {
                        "-h"
                    } else {
                        "--version"
                    })
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_err()
            })
            .collect();
        if !missing.is_empty() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{missing:?} missing in CI (apt-get install docker-registry skopeo apache2-utils)"
            );
            eprintln!("skipped: {missing:?} not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.yml");
        let mut yaml = format!(
            "version: 0.1\nlog: {{level: info, accesslog: {{disabled: true}}}}\n\
             storage: {{filesystem: {{rootdirectory: {}}}}}\nhttp: {{addr: {host}:0}}\n",
            dir.path().join("data").display()
        );
        if let Some((user, password)) = login {
            let out = Command::new("htpasswd")
                .args(["-Bbn", user, password])
                .output()
                .unwrap();
            let file = dir.path().join("htpasswd");
            std::fs::write(&file, out.stdout).unwrap();
            yaml.push_str(&format!(
                "auth: {{htpasswd: {{realm: toolhost-test, path: {}}}}}\n",
                file.display()
            ));
        }
        std::fs::write(&config, yaml).unwrap();
        let log = dir.path().join("log");
        let mut child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let port = loop {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(port) = said
                .split(&format!("listening on {host}:"))
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|port| port.parse().ok())
            {
                break port;
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("docker-registry did not start: {said}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        Some(Self {
            child,
            host: host.to_string(),
            port,
            _dir: dir,
        })
    }

    fn reference(&self, path: &str) -> Reference {
        Reference::parse(&format!("oci://{}:{}/{path}", self.host, self.port)).unwrap()
    }

    fn docker(&self, path: &str) -> String {
        format!("docker://{}:{}/{path}", self.host, self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolhost publish` run as a user runs it; its status, stdout, stderr.
fn publish(file: &str, reference: &str) -> (bool, String, String) {
    publish_with(file, reference, &[])
}

/// The same, with `env` set (and no Docker config but one `env` names).
fn publish_with(file: &str, reference: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args([
            "publish",
            file,
            reference,
            "--source",
            "https://example.org/src",
            "-d",
        ])
        .arg(dir.path())
        .env_remove("TOOLHOST_REGISTRY_USERNAME")
        .env_remove("TOOLHOST_REGISTRY_PASSWORD")
        .env("DOCKER_CONFIG", dir.path().join("no-docker-config"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skopeo(args: &[&str]) -> Vec<u8> {
    let out = Command::new("skopeo").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Push `manifest` and `blobs` to `registry` as `repository_tag` with
/// skopeo, from an OCI layout written by hand, keeping their digests.
fn push_with_skopeo(registry: &Registry, repository_tag: &str, blobs: &[&[u8]], manifest: &[u8]) {
    let layout = tempfile::tempdir().unwrap();
    let dir = layout.path().join("blobs/sha256");
    std::fs::create_dir_all(&dir).unwrap();
    for bytes in blobs.iter().chain([&manifest]) {
        std::fs::write(dir.join(Digest::of(bytes).hex()), bytes).unwrap();
    }
    std::fs::write(
        layout.path().join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .unwrap();
    let index = json!({
        "schemaVersion": 2,
        "manifests": [{
            "mediaType": oci::artifact::MANIFEST_MEDIA_TYPE,
            "digest": Digest::of(manifest).as_str(),
            "size": manifest.len(),
            "annotations": {"org.opencontainers.image.ref.name": "pushed"},
        }],
    });
    std::fs::write(layout.path().join("index.json"), index.to_string()).unwrap();
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &format!("oci:{}:pushed", layout.path().display()),
        &registry.docker(repository_tag),
    ]);
}

/// The manifest `path` (`repository:tag`) names in `registry`, as skopeo
/// reads it.
fn inspect(registry: &Registry, path: &str) -> Value {
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &registry.docker(path),
    ]);
    serde_json::from_slice(&raw).unwrap()
}

/// The files in the cache's blob folder.
fn cached(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("sha256"))
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_component_is_read_by_skopeo_and_pulled_pinned_by_digest() {
    let Some(registry) = Registry::start() else {
        return;
    };
    let echo = common::artifact("echo");
    let tag = registry.reference("team/echo:v1");
    let (ok, pinned, err) = publish(echo, &tag.to_string());
    assert!(ok, "{err}");
    let pinned = Reference::parse(&pinned).unwrap_or_else(|e| panic!("{pinned}: {e}"));
    let digest = pinned.digest.clone().unwrap();

    // What skopeo, another client, reads is what was published: the wasm
    // artifact layout, the tool's metadata annotated.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &registry.docker("team/echo:v1"),
    ]);
    assert_eq!(Digest::of(&raw), digest);
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["mediaType"], oci::artifact::MANIFEST_MEDIA_TYPE);
    assert_eq!(
        manifest["config"]["mediaType"],
        oci::artifact::CONFIG_MEDIA_TYPE
    );
    let layer = &manifest["layers"][0];
    assert_eq!(layer["mediaType"], "application/wasm");
    assert_eq!(
        layer["annotations"]["org.opencontainers.image.title"],
        "echo.wasm"
    );
    assert_eq!(
        layer["digest"],
        Digest::of(&std::fs::read(echo).unwrap()).as_str()
    );
    let annotations = &manifest["annotations"];
    assert_eq!(annotations["dev.toolhost.tool"], "echo");
    assert!(
        !annotations["org.opencontainers.image.description"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        annotations["org.opencontainers.image.source"],
        "https://example.org/src"
    );
    let config: Value = serde_json::from_slice(&skopeo(&[
        "inspect",
        "--raw",
        "--config",
        "--tls-verify=false",
        &registry.docker("team/echo:v1"),
    ]))
    .unwrap();
    assert_eq!(
        (config["architecture"].as_str(), config["os"].as_str()),
        (Some("wasm"), Some("wasip2"))
    );
    assert!(
        config["component"]["exports"]
            .to_string()
            .contains("toolhost:tool/"),
        "{config}"
    );

    // Pulled by tag and pinned: the component's bytes, in the cache.
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    let pulled = oci::pull(Network::system(), &tag, None, &cache, None, |_, _| {})
        .await
        .unwrap();
    assert_eq!(pulled.reference.digest.as_ref(), Some(&digest));
    assert_eq!(
        std::fs::read(&pulled.path).unwrap(),
        std::fs::read(echo).unwrap()
    );
    // The tag moves upstream; what is pinned does not.
    let other = common::artifact("counter");
    let (ok, moved, err) = publish(other, &tag.to_string());
    assert!(ok, "{err}");
    assert_ne!(moved, pinned.to_string());
    let again = oci::pull(
        Network::system(),
        &tag,
        Some(&digest),
        &cache,
        None,
        |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(&again.path).unwrap(),
        std::fs::read(echo).unwrap()
    );
    let wrong = Digest::of(b"another manifest");
    let refused = oci::pull(
        Network::system(),
        &tag,
        Some(&wrong),
        &cache,
        None,
        |_, _| {},
    )
    .await
    .unwrap_err();
    assert!(
        refused.contains("404") || refused.contains("not the pinned"),
        "{refused}"
    );

    // Publishing what is not a component, or to a digest, is refused.
    let junk = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(junk.path(), b"not wasm").unwrap();
    let (ok, _, err) = publish(junk.path().to_str().unwrap(), &tag.to_string());
    assert!(!ok && err.contains("does not load"), "{err}");
    let (ok, _, err) = publish(echo, &pinned.to_string());
    assert!(!ok && err.contains("publish to a tag"), "{err}");
    let (ok, _, err) = publish(echo, "oci://127.0.0.1/Team/Echo");
    assert!(!ok && err.contains("repository"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_another_client_pushed_is_pulled() {
    let Some(registry) = Registry::start() else {
        return;
    };
    // An OCI layout written by hand, pushed by skopeo with its digests.
    let component = std::fs::read(common::artifact("echo")).unwrap();
    let layer = Digest::of(&component);
    let config = oci::artifact::config(&layer, &[], &["toolhost:tool/tool@0.2.2".to_string()]);
    let manifest = oci::artifact::manifest(
        &config,
        &layer,
        component.len() as u64,
        "echo.wasm",
        BTreeMap::from([(
            "org.opencontainers.image.description".into(),
            "by skopeo".into(),
        )]),
    );
    push_with_skopeo(
        &registry,
        "other/echo:v1",
        &[&component, &config],
        &manifest,
    );
    let cache_dir = tempfile::tempdir().unwrap();
    let pulled = oci::pull(
        Network::system(),
        &registry.reference("other/echo:v1"),
        Some(&Digest::of(&manifest)),
        &Cache::new(cache_dir.path()),
        None,
        |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read(&pulled.path).unwrap(), component);
}

/// Resolves `objects.example` to a public address; [`ToLoopback`] takes
/// every connection to loopback on the same port.
struct ObjectStorage;

impl Resolver for ObjectStorage {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        let answer = match host {
            "objects.example" => Ok(vec!["93.184.216.34".parse().unwrap()]),
            "inside.example" => Ok(vec!["10.0.0.7".parse().unwrap()]),
            _ => Err(io::Error::new(io::ErrorKind::NotFound, "not scripted")),
        };
        Box::pin(async move { answer })
    }
}

struct ToLoopback;

impl Dialer for ToLoopback {
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>> {
        Box::pin(TcpStream::connect(("127.0.0.1", addr.port())))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_registry_is_refused_and_nothing_is_cached() {
    let component = std::fs::read(common::artifact("echo")).unwrap();
    let layer = Digest::of(&component);
    let config = oci::artifact::config(&layer, &[], &["toolhost:tool/tool@0.2.2".to_string()]);
    let good = oci::artifact::manifest(
        &config,
        &layer,
        component.len() as u64,
        "echo.wasm",
        BTreeMap::new(),
    );
    let good_value: Value = serde_json::from_slice(&good).unwrap();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut manifest = good_value.clone();
        edit(&mut manifest);
        serde_json::to_vec(&manifest).unwrap()
    };
    let two_layers = with(&|m| {
        let layer = m["layers"][0].clone();
        m["layers"].as_array_mut().unwrap().push(layer);
    });
    let tar_layer =
        with(&|m| m["layers"][0]["mediaType"] = json!("application/vnd.oci.image.layer.v1.tar"));
    let huge_layer = with(&|m| m["layers"][0]["size"] = json!(1u64 << 40));
    let docker_type =
        with(&|m| m["mediaType"] = json!("application/vnd.docker.distribution.manifest.v2+json"));
    let short = with(&|m| m["layers"][0]["size"] = json!(component.len() - 1));
    let tampered: Vec<u8> = component.iter().rev().copied().collect();
    let manifests: Arc<Vec<(&'static str, Vec<u8>)>> = Arc::new(vec![
        ("good", good.clone()),
        ("two-layers", two_layers),
        ("tar-layer", tar_layer),
        ("huge-layer", huge_layer),
        ("docker-type", docker_type),
        ("short", short),
    ]);
    // The blob path answers by a query-less convention: the repository
    // says what the blob does.
    let layer_path = format!("/blobs/{layer}");
    let (serve_manifests, component_bytes) = (Arc::clone(&manifests), component.clone());
    let storage = Server::start(move |head| {
        let path = head.split(' ').nth(1).unwrap_or_default().to_string();
        if head.to_ascii_lowercase().contains("authorization:") {
            return reply("403 Forbidden", "", b"credentials reached object storage");
        }
        if path.starts_with("/objects/") {
            return reply("200 OK", "", &component_bytes);
        }
        reply("404 Not Found", "", b"")
    })
    .await;
    let storage_port = storage.addr.port();
    let served = component.clone();
    let registry = Server::start(move |head| {
        let path = head.split(' ').nth(1).unwrap_or_default().to_string();
        let repository = path.split('/').nth(2).unwrap_or_default().to_string();
        if path.contains("/manifests/") {
            if repository == "wrong-type" {
                return reply("200 OK", "content-type: text/html\r\n", b"<html>");
            }
            if repository == "oversized" {
                let big = vec![b' '; 5 << 20];
                return reply(
                    "200 OK",
                    &format!("content-type: {}\r\n", oci::artifact::MANIFEST_MEDIA_TYPE),
                    &big,
                );
            }
            let name = path.rsplit('/').next().unwrap_or_default();
            let manifest = serve_manifests
                .iter()
                .find(|(n, _)| *n == repository || *n == name)
                .map_or(&serve_manifests[0].1, |(_, m)| m);
            return reply(
                "200 OK",
                &format!("content-type: {}\r\n", oci::artifact::MANIFEST_MEDIA_TYPE),
                manifest,
            );
        }
        if path.ends_with(&layer_path) {
            return match repository.as_str() {
                "tampered" => reply("200 OK", "", &tampered),
                "longer" => {
                    let mut more = served.clone();
                    more.extend_from_slice(b"and more");
                    reply("200 OK", "", &more)
                }
                "to-storage" => reply(
                    "307 Temporary Redirect",
                    &format!("location: http://objects.example:{storage_port}/objects/1\r\n"),
                    b"",
                ),
                "to-inside" => reply(
                    "307 Temporary Redirect",
                    &format!("location: http://inside.example:{storage_port}/objects/1\r\n"),
                    b"",
                ),
                "to-loopback" => reply(
                    "307 Temporary Redirect",
                    &format!("location: http://127.0.0.2:{storage_port}/objects/1\r\n"),
                    b"",
                ),
                "loop" => reply("302 Found", &format!("location: {path}\r\n"), b""),
                _ => reply("200 OK", "", &served),
            };
        }
        reply("404 Not Found", "", b"")
    })
    .await;
    let network = Network::system()
        .with_resolver(Arc::new(ObjectStorage))
        .with_dialer(Arc::new(ToLoopback));
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    let credentials = Some(Credentials {
        username: "ada".into(),
        password: "s3cret".into(),
    });
    let pull = |repository: &str| {
        let reference = Reference::parse(&format!(
            "oci://127.0.0.1:{}/{repository}:v1",
            registry.addr.port()
        ))
        .unwrap();
        let (network, cache, credentials) = (network.clone(), cache.clone(), credentials.clone());
        async move { oci::pull(network, &reference, None, &cache, credentials, |_, _| {}).await }
    };
    for (repository, why) in [
        ("wrong-type", "not an image manifest"),
        ("oversized", "over 4 MiB"),
        ("two-layers", "has 2 layers"),
        ("tar-layer", "not application/wasm"),
        ("huge-layer", "over the"),
        ("docker-type", "not an OCI image manifest"),
        ("short", "runs past"),
        ("tampered", "is sha256:"),
        ("longer", "runs past"),
        ("to-inside", "not globally routable"),
        ("to-loopback", "not a globally routable address"),
        ("loop", "more than 5 redirects"),
    ] {
        let refused = pull(repository).await.expect_err(repository);
        assert!(refused.contains(why), "{repository}: {refused}");
        assert_eq!(
            cached(cache_dir.path()),
            Vec::<PathBuf>::new(),
            "{repository}"
        );
    }
    // Redirected to object storage elsewhere: followed, without the
    // registry's credentials (storage refuses any), kept by its digest.
    let pulled = pull("to-storage").await.unwrap();
    assert_eq!(std::fs::read(&pulled.path).unwrap(), component);
    assert!(
        registry
            .heads()
            .iter()
            .any(|h| h.to_ascii_lowercase().contains("authorization: basic")),
        "the registry itself got the credentials"
    );
    // Cached now: a registry that would send other bytes is not asked.
    let again = pull("tampered").await.unwrap();
    assert_eq!(again.path, pulled.path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_that_asks_for_credentials_gets_them_from_the_environment_or_dockers_config() {
    let password = "s3cret-not-to-be-shown";
    let Some(registry) = Registry::start_with(Some(("ada", password))) else {
        return;
    };
    let echo = common::artifact("echo");
    let tag = registry.reference("team/echo:v1").to_string();

    // Without credentials, and with wrong ones: refused, naming the
    // registry's answer; the password never shown.
    let (ok, _, err) = publish(echo, &tag);
    assert!(!ok && err.contains("401"), "{err}");
    let wrong = [
        ("TOOLHOST_REGISTRY_USERNAME", "ada"),
        ("TOOLHOST_REGISTRY_PASSWORD", "wrong-password-x"),
    ];
    let (ok, _, err) = publish_with(echo, &tag, &wrong);
    assert!(
        !ok && err.contains("401") && !err.contains("wrong-password-x"),
        "{err}"
    );

    // From the environment.
    let right = [
        ("TOOLHOST_REGISTRY_USERNAME", "ada"),
        ("TOOLHOST_REGISTRY_PASSWORD", password),
    ];
    let (ok, pinned, err) = publish_with(echo, &tag, &right);
    assert!(ok, "{err}");

    // From Docker's config file, as `docker login` writes it.
    use base64::Engine as _;
    let docker = tempfile::tempdir().unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("ada:{password}"));
    let config = json!({ "auths": { format!("127.0.0.1:{}", registry.port): { "auth": auth } } });
    std::fs::write(docker.path().join("config.json"), config.to_string()).unwrap();
    let docker_env = [("DOCKER_CONFIG", docker.path().to_str().unwrap())];
    let other = registry.reference("team/echo:v2").to_string();
    let (ok, _, err) = publish_with(echo, &other, &docker_env);
    assert!(ok, "{err}");
    // A Docker config entry that does not decode is an error naming it.
    std::fs::write(
        docker.path().join("config.json"),
        json!({ "auths": { format!("127.0.0.1:{}", registry.port): { "auth": "%%%" } } })
            .to_string(),
    )
    .unwrap();
    let (ok, _, err) = publish_with(echo, &other, &docker_env);
    assert!(!ok && err.contains("Docker's credentials"), "{err}");

    // Pulled with them, and refused without.
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    let reference = Reference::parse(&pinned).unwrap();
    let credentials = Credentials {
        username: "ada".into(),
        password: password.into(),
    };
    let refused = oci::pull(Network::system(), &reference, None, &cache, None, |_, _| {})
        .await
        .unwrap_err();
    assert!(
        refused.contains("401") && !refused.contains(password),
        "{refused}"
    );
    let pulled = oci::pull(
        Network::system(),
        &reference,
        None,
        &cache,
        Some(credentials),
        |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(&pulled.path).unwrap(),
        std::fs::read(echo).unwrap()
    );
}

/// `toolhost add` or `toolhost update` in `dir`; its status, stdout,
/// stderr.
fn toolhost(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let no_config = dir.join("no-docker-config");
    toolhost_with(dir, args, &[("DOCKER_CONFIG", no_config.to_str().unwrap())])
}

/// The same, with `env` set.
fn toolhost_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .arg("-d")
        .arg(dir)
        .env_remove("TOOLHOST_REGISTRY_USERNAME")
        .env_remove("TOOLHOST_REGISTRY_PASSWORD")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_by_reference_runs_pinned_until_updated_and_from_the_cache() {
    let Some(registry) = Registry::start() else {
        return;
    };
    let echo = common::artifact("echo");
    let tag = registry.reference("team/greet:v1").to_string();
    let (ok, first, err) = publish(echo, &tag);
    assert!(ok, "{err}");
    let dir = common::host_dir(&[], "# the operator's notes stay\n[limits]\n");
    let (ok, out, err) = toolhost(dir.path(), &["add", &tag]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("added `greet` from {first}")),
        "{out}"
    );
    let config = std::fs::read_to_string(dir.path().join("toolhost.toml")).unwrap();
    assert!(config.contains("# the operator's notes stay"), "{config}");
    assert!(config.contains(&format!("greet = \"{first}\"")), "{config}");

    // Loaded by the host, and run.
    let echo_sha = toolhost::oci::Digest::of(&std::fs::read(echo).unwrap());
    let host = common::load(dir.path()).await;
    let loaded = host.registry().get("greet").expect("greet loads").clone();
    assert_eq!(format!("sha256:{}", loaded.sha256()), echo_sha.as_str());
    let said = host
        .call("greet", json!({"text": "from a registry"}), &common::live())
        .await
        .unwrap();
    assert!(
        said.result.to_string().contains("from a registry"),
        "{}",
        said.result
    );
    drop(host);

    // The tag moves upstream: nothing changes until `update`.
    let (ok, moved, err) = publish(common::artifact("counter"), &tag);
    assert!(ok, "{err}");
    let host = common::load(dir.path()).await;
    let still = host.registry().get("greet").unwrap().clone();
    assert_eq!(still.sha256(), loaded.sha256());
    drop(host);
    let (ok, out, err) = toolhost(dir.path(), &["update", "greet"]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("updated `greet` to {moved}")),
        "{out}"
    );
    assert!(
        out.contains("manifest sha256:") && out.contains("description changed"),
        "{out}"
    );
    let (ok, out, _) = toolhost(dir.path(), &["update"]);
    assert!(ok && out.contains("`greet` is up to date"), "{out}");
    let (ok, _, err) = toolhost(dir.path(), &["update", "nope"]);
    assert!(!ok && err.contains("[sources] has no `nope`"), "{err}");
    let host = common::load(dir.path()).await;
    let updated = host.registry().get("greet").unwrap().clone();
    assert_ne!(updated.sha256(), loaded.sha256());
    drop(host);

    // The registry gone: a start reads the pinned tool from the cache,
    // asking no credential helper (this one names a helper that is not
    // there).
    drop(registry);
    let host = common::load(dir.path()).await;
    assert!(
        host.registry().get("greet").is_some(),
        "{:?}",
        host.registry().failures()
    );
    drop(host);
    let docker = tempfile::tempdir().unwrap();
    std::fs::write(
        docker.path().join("config.json"),
        r#"{"credsStore": "toolhost-test-missing-helper"}"#,
    )
    .unwrap();
    let broken_helper = [("DOCKER_CONFIG", docker.path().to_str().unwrap())];
    let (ok, out, err) = toolhost_with(
        dir.path(),
        &["tool", "call", "greet", "--input", r#"{"name": "hits"}"#],
        &broken_helper,
    );
    // It ran (the counter, without the kv grant it would need, says so):
    // it was loaded.
    let said = format!("{out}{err}");
    assert!(
        said.contains("key-value: access denied") && !said.contains("Docker"),
        "{ok}: {said}"
    );
    // A cached component changed behind the host's back: refused, naming
    // the source (the registry is gone, so it cannot be pulled again).
    let blob = dir
        .path()
        .join(".toolhost/oci/sha256")
        .join(updated.sha256());
    std::fs::write(&blob, b"not what was pulled").unwrap();
    let host = common::load(dir.path()).await;
    assert!(host.registry().get("greet").is_none());
    let failure = host
        .registry()
        .failures()
        .iter()
        .find(|f| f.tool.as_deref() == Some("greet"))
        .cloned()
        .expect("greet's failure");
    assert!(
        failure.file.display().to_string().starts_with("oci://"),
        "{failure:?}"
    );
    assert!(!blob.exists(), "the changed blob is removed");

    // A source not pinned, written by hand: the config names it.
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!("[sources]\ngreet = \"{tag}\"\n"),
    )
    .unwrap();
    let refused = toolhost::Host::builder(dir.path())
        .build()
        .await
        .err()
        .unwrap();
    assert!(format!("{refused:#}").contains("not pinned"), "{refused:#}");
}

/// `toolhost` run with `args` alone (no host directory); status, stdout,
/// stderr.
fn toolhost_bare(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .env_remove("COSIGN_PASSWORD")
        .env("DOCKER_CONFIG", "/nonexistent/docker-config")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Load `dir` and check each of `names` loaded.
async fn assert_loads(dir: &Path, names: &[&str]) {
    let host = common::load(dir).await;
    for name in names {
        assert!(
            host.registry().get(name).is_some(),
            "{name}: {:?}",
            host.registry().failures()
        );
    }
}

/// The failure a load of `dir` reports for `name`.
async fn load_failure(dir: &Path, name: &str) -> String {
    let host = common::load(dir).await;
    assert!(host.registry().get(name).is_none(), "{name} loaded");
    host.registry()
        .failures()
        .iter()
        .find(|f| f.tool.as_deref() == Some(name))
        .map(|f| format!("{}: {}", f.file.display(), f.reason))
        .unwrap_or_else(|| panic!("no failure for {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_component_a_trusted_key_signed_for_its_digest_is_added_or_loaded() {
    let Some(registry) = Registry::start() else {
        return;
    };
    let echo_tag = registry.reference("team/echo:v1").to_string();
    let other_tag = registry.reference("team/other:v1").to_string();
    let (ok, echo_pinned, err) = publish(common::artifact("echo"), &echo_tag);
    assert!(ok, "{err}");
    let (ok, other_pinned, err) = publish(common::artifact("counter"), &other_tag);
    assert!(ok, "{err}");
    let echo_digest = Reference::parse(&echo_pinned).unwrap().digest.unwrap();
    let other_digest = Reference::parse(&other_pinned).unwrap().digest.unwrap();

    // Keys, as cosign makes them; never replaced.
    let keys = tempfile::tempdir().unwrap();
    let key = |name: &str| keys.path().join(name).to_str().unwrap().to_string();
    let password = [("COSIGN_PASSWORD", "correct horse")];
    for name in ["acme", "stranger"] {
        let (ok, out, err) = toolhost_bare(&["keygen", &key(name)], &password);
        assert!(ok, "{err}");
        assert_eq!(
            out,
            format!(
                "{}\n{}",
                key(&format!("{name}.key")),
                key(&format!("{name}.pub"))
            )
        );
    }
    let private = std::fs::read_to_string(key("acme.key")).unwrap();
    assert!(
        private.contains("ENCRYPTED SIGSTORE PRIVATE KEY"),
        "{private}"
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(key("acme.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let (ok, _, err) = toolhost_bare(&["keygen", &key("acme")], &password);
    assert!(!ok && err.contains("exists"), "{err}");
    assert_eq!(std::fs::read_to_string(key("acme.key")).unwrap(), private);

    // An operator trusting acme's key for the team's repositories.
    let port = registry.port;
    let trusted = |keys_listed: &str, required: bool| {
        format!(
            "[trust.\"127.0.0.1:{port}/team\"]\nkeys = [{keys_listed}]\nrequired = {required}\n"
        )
    };
    let dir = common::host_dir(&[], &trusted(r#""acme.pub""#, true));
    for name in ["acme.pub", "stranger.pub"] {
        std::fs::copy(key(name), dir.path().join(name)).unwrap();
    }
    let set_trust = |text: &str| {
        let config = std::fs::read_to_string(dir.path().join("toolhost.toml")).unwrap();
        let start = config.find("[trust.").unwrap();
        let end = config[start..].find("required = ").unwrap() + start;
        let end = config[end..].find('\n').unwrap() + end + 1;
        let config = format!("{}{text}{}", &config[..start], &config[end..]);
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    };

    // Unsigned: refused before anything is written.
    let (ok, _, err) = toolhost(dir.path(), &["add", &echo_tag]);
    assert!(!ok, "added unsigned");
    assert!(
        err.contains("has no signature") && err.contains(&oci::signature::tag(&echo_digest)),
        "{err}"
    );
    let config = std::fs::read_to_string(dir.path().join("toolhost.toml")).unwrap();
    assert!(!config.contains("[sources]"), "{config}");

    // Signed by acme (a wrong password opens nothing): added, and says so.
    let (ok, _, err) = toolhost_bare(
        &["sign", &echo_tag, "--key", &key("acme.key")],
        &[("COSIGN_PASSWORD", "wrong")],
    );
    assert!(!ok && err.contains("COSIGN_PASSWORD"), "{err}");
    let (ok, out, err) = toolhost_bare(&["sign", &echo_tag, "--key", &key("acme.key")], &password);
    assert!(ok, "{err}");
    assert_eq!(out, echo_pinned);
    let sig_tag = format!("team/echo:{}", oci::signature::tag(&echo_digest));
    let listing: Value = inspect(&registry, &sig_tag);
    assert_eq!(listing["layers"].as_array().unwrap().len(), 1, "{listing}");
    assert_eq!(
        listing["layers"][0]["mediaType"],
        oci::signature::PAYLOAD_MEDIA_TYPE
    );
    assert!(listing["layers"][0]["annotations"][oci::signature::SIGNATURE_ANNOTATION].is_string());
    let (ok, out, err) = toolhost(dir.path(), &["add", &echo_tag]);
    assert!(ok, "{err}");
    assert!(out.contains("signed by acme.pub"), "{out}");

    // Signed by a key the operator does not trust: refused.
    let (ok, _, err) = toolhost_bare(
        &["sign", &other_tag, "--key", &key("stranger.key")],
        &password,
    );
    assert!(ok, "{err}");
    let (ok, _, err) = toolhost(dir.path(), &["add", &other_tag]);
    assert!(
        !ok && err.contains("made by none of its keys") && err.contains("acme.pub"),
        "{err}"
    );

    // acme's signature of echo, replayed as other's: it names another
    // manifest, and is refused.
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        &registry.docker(&sig_tag),
        &registry.docker(&format!(
            "team/other:{}",
            oci::signature::tag(&other_digest)
        )),
    ]);
    let (ok, _, err) = toolhost(dir.path(), &["add", &other_tag]);
    assert!(
        !ok && err.contains(&format!("acme.pub signed {echo_digest}, another manifest")),
        "{err}"
    );

    // Another implementation: a key and a signature made by openssl over
    // a payload written here in cosign's format, pushed by skopeo.
    openssl(&[
        "genpkey",
        "-algorithm",
        "EC",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-out",
        &key("ossl.key"),
    ]);
    openssl(&[
        "pkey",
        "-in",
        &key("ossl.key"),
        "-pubout",
        "-out",
        &key("ossl.pub"),
    ]);
    std::fs::copy(key("ossl.pub"), dir.path().join("ossl.pub")).unwrap();
    let payload = format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"127.0.0.1:{}/team/other"}},"image":{{"docker-manifest-digest":"{other_digest}"}},"type":"cosign container image signature"}},"optional":{{"by":"openssl"}}}}"#,
        registry.port
    );
    std::fs::write(key("payload.json"), &payload).unwrap();
    openssl(&[
        "dgst",
        "-sha256",
        "-sign",
        &key("ossl.key"),
        "-out",
        &key("payload.sig"),
        &key("payload.json"),
    ]);
    use base64::Engine as _;
    let signature = base64::engine::general_purpose::STANDARD
        .encode(std::fs::read(key("payload.sig")).unwrap());
    let config =
        br#"{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[]}}"#;
    let listing = json!({
        "schemaVersion": 2,
        "mediaType": oci::artifact::MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": Digest::of(config).as_str(), "size": config.len()},
        "layers": [{
            "mediaType": oci::signature::PAYLOAD_MEDIA_TYPE,
            "digest": Digest::of(payload.as_bytes()).as_str(),
            "size": payload.len(),
            "annotations": {"dev.cosignproject.cosign/signature": signature},
        }],
    });
    push_with_skopeo(
        &registry,
        &format!("team/other:{}", oci::signature::tag(&other_digest)),
        &[payload.as_bytes(), config],
        listing.to_string().as_bytes(),
    );
    set_trust(&trusted(r#""acme.pub", "ossl.pub""#, true));
    let (ok, out, err) = toolhost(dir.path(), &["add", &other_tag, "--as", "other"]);
    assert!(ok, "{err}");
    assert!(out.contains("signed by ossl.pub"), "{out}");

    // openssl's PKCS#8 key signs too; acme's signature is kept beside it.
    let (ok, _, err) = toolhost_bare(&["sign", &echo_pinned, "--key", &key("ossl.key")], &[]);
    assert!(ok, "{err}");
    let listing: Value = inspect(&registry, &sig_tag);
    assert_eq!(listing["layers"].as_array().unwrap().len(), 2, "{listing}");

    // Loaded by the host; with the registry gone, a start checks the
    // signatures it kept against the keys trusted now.
    assert_loads(dir.path(), &["echo", "other"]).await;
    drop(registry);
    set_trust(&trusted(r#""acme.pub""#, true));
    assert_loads(dir.path(), &["echo"]).await;
    let failure = load_failure(dir.path(), "other").await;
    assert!(
        failure.starts_with("oci://") && failure.contains("reading its signatures"),
        "{failure}"
    );
    // Not required: a tool no trusted key signed loads (and is logged).
    set_trust(&trusted(r#""stranger.pub""#, false));
    assert_loads(dir.path(), &["echo"]).await;
    // A key file that is not a key: the config names it.
    std::fs::write(dir.path().join("stranger.pub"), "not a key").unwrap();
    let refused = toolhost::Host::builder(dir.path())
        .build()
        .await
        .err()
        .unwrap();
    assert!(
        format!("{refused:#}").contains("stranger.pub is not a PEM public key"),
        "{refused:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_registrys_signatures_are_read_within_bounds() {
    use oci::signature::{self, Signed, Trust, TrustedKey, Verdict};
    let pinned = Digest::of(b"the pinned manifest");
    let (private, public) = signature::generate(b"").unwrap();
    let signer = signature::signer_from_pem(private.as_bytes(), b"").unwrap();
    let trust = Trust {
        scope: "*".into(),
        keys: vec![TrustedKey::from_pem("acme.pub", public.as_bytes()).unwrap()],
        required: true,
    };
    let good = Signed::new(&signer, "r/valid", &pinned).unwrap();
    let forged = Signed {
        payload: good.payload.clone(),
        signature: Signed::new(&signer, "r/valid", &Digest::of(b"x"))
            .unwrap()
            .signature,
    };
    let listing = |signatures: &[Signed]| signature::manifest(signatures).1;
    let many = listing(&vec![forged.clone(); 1000]);
    let mut huge: Value = serde_json::from_slice(&listing(std::slice::from_ref(&good))).unwrap();
    huge["layers"][0]["size"] = json!(1u64 << 30);
    let listings: Arc<BTreeMap<&'static str, Vec<u8>>> = Arc::new(BTreeMap::from([
        ("valid", listing(std::slice::from_ref(&good))),
        ("many", many),
        ("huge-payload", serde_json::to_vec(&huge).unwrap()),
        ("wrong-payload", listing(std::slice::from_ref(&good))),
    ]));
    let (served, payload) = (Arc::clone(&listings), good.payload.clone());
    let registry = Server::start(move |head| {
        let path = head.split(' ').nth(1).unwrap_or_default().to_string();
        let repository = path.split('/').nth(2).unwrap_or_default().to_string();
        let manifest_type = format!("content-type: {}\r\n", oci::artifact::MANIFEST_MEDIA_TYPE);
        if path.contains("/manifests/") {
            return match repository.as_str() {
                "html" => reply("200 OK", "content-type: text/html\r\n", b"<html>"),
                "oversized" => reply("200 OK", &manifest_type, &vec![b' '; 5 << 20]),
                "broken" => reply("500 Internal Server Error", "", b"down"),
                other => match served.get(other) {
                    Some(listing) => reply("200 OK", &manifest_type, listing),
                    None => reply("404 Not Found", "", b""),
                },
            };
        }
        if path.contains("/blobs/") {
            return match repository.as_str() {
                "wrong-payload" => reply("200 OK", "", &payload.replace('{', "[").into_bytes()),
                "many" => reply("200 OK", "", forged.payload.as_bytes()),
                _ => reply("200 OK", "", payload.as_bytes()),
            };
        }
        reply("404 Not Found", "", b"")
    })
    .await;
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    let port = registry.addr.port();
    let reference = |repository: &str| {
        Reference::parse(&format!("oci://127.0.0.1:{port}/{repository}:v1@{pinned}")).unwrap()
    };
    let network = Network::system();
    for (repository, why) in [
        ("none", "has no signature"),
        ("html", "not an image manifest"),
        ("oversized", "over 4 MiB"),
        ("broken", "500"),
        ("huge-payload", "over 65536"),
        ("wrong-payload", "is sha256:"),
        ("many", "made by none of its keys"),
    ] {
        let refused = oci::verify(&network, &reference(repository), &trust, &cache)
            .await
            .expect_err(repository);
        assert!(
            refused.contains(why) && refused.contains(repository),
            "{repository}: {refused}"
        );
        assert!(cache.signatures(&pinned).is_empty(), "{repository}");
    }
    // Of a thousand layers, sixteen payloads were fetched.
    let fetched = registry
        .heads()
        .iter()
        .filter(|h| h.contains("/many/blobs/"))
        .count();
    assert_eq!(fetched, signature::MAX_SIGNATURES);
    assert!(
        !registry
            .heads()
            .iter()
            .any(|h| h.contains("/huge-payload/blobs/"))
    );

    // A good one is kept, and serves the next check with no registry.
    let verdict = oci::verify(&network, &reference("valid"), &trust, &cache)
        .await
        .unwrap();
    assert!(
        matches!(verdict, Verdict::Signed { ref key, .. } if key == "acme.pub"),
        "{verdict:?}"
    );
    assert_eq!(cache.signatures(&pinned), vec![good.clone()]);
    // Kept, it needs no registry: the same pin at a port nothing listens on.
    let gone = Reference::parse(&format!("oci://127.0.0.1:1/valid:v1@{pinned}")).unwrap();
    let verdict = oci::verify(&network, &gone, &trust, &cache).await.unwrap();
    assert!(matches!(verdict, Verdict::Signed { .. }));
    // What is kept on disk counts only as it verifies: changed to another
    // payload's signature, to garbage, or to 8 MiB, it is nothing.
    let planted = Signed {
        payload: good.payload.clone(),
        signature: Signed::new(&signer, "r/valid", &Digest::of(b"y"))
            .unwrap()
            .signature,
    };
    cache.keep_signatures(&pinned, &[planted]).unwrap();
    let kept = cache_dir
        .path()
        .join("signatures")
        .join(format!("{}.json", pinned.hex()));
    for plant in [
        None,
        Some(&b"{not json"[..]),
        Some(&vec![b'['; 8 << 20][..]),
    ] {
        if let Some(bytes) = plant {
            std::fs::write(&kept, bytes).unwrap();
        }
        let refused = oci::verify(&network, &gone, &trust, &cache)
            .await
            .unwrap_err();
        assert!(refused.contains("reading its signatures"), "{refused}");
    }
    // The registry's genuine one is read again, and kept again.
    let asked = registry.heads().len();
    let verdict = oci::verify(&network, &reference("valid"), &trust, &cache)
        .await
        .unwrap();
    assert!(matches!(verdict, Verdict::Signed { .. }));
    assert!(registry.heads().len() > asked);
    assert_eq!(cache.signatures(&pinned), vec![good]);
}

/// An IPv4 address of this machine that is not loopback (`hostname -I`).
fn own_address() -> Option<String> {
    let out = Command::new("hostname").arg("-I").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|a| a.parse::<std::net::Ipv4Addr>().ok())
        .find(|a| !a.is_loopback())
        .map(|a| a.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_listed_as_insecure_is_spoken_to_over_plain_http_and_no_other() {
    let Some(address) = own_address() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no non-loopback IPv4 address in CI"
        );
        eprintln!("skipped: this machine has no non-loopback IPv4 address");
        return;
    };
    let Some(registry) = Registry::start_at(&address, None) else {
        return;
    };
    let tag = registry.reference("team/echo:v1").to_string();
    // Not listed: HTTPS, which a plain registry does not speak.
    let (ok, _, err) = publish(common::artifact("echo"), &tag);
    assert!(!ok && err.contains("https://"), "{err}");

    let listed = format!(
        "[registries]\ninsecure = [\"{address}:{}\"]\n",
        registry.port
    );
    let dir = common::host_dir(&[], &listed);
    let (ok, pinned, err) = toolhost(dir.path(), &["publish", common::artifact("echo"), &tag]);
    assert!(ok, "{err}");
    let (ok, out, err) = toolhost(dir.path(), &["add", &tag]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("added `echo` from {}", pinned.trim())),
        "{out}"
    );
    // The host too: from an empty cache, over plain HTTP.
    std::fs::remove_dir_all(dir.path().join(".toolhost/oci")).unwrap();
    assert_loads(dir.path(), &["echo"]).await;
    // Another port of the same host is not listed.
    let other = format!("oci://{address}:{}/team/echo:v1", registry.port + 1);
    let (ok, _, err) = toolhost(dir.path(), &["add", &other, "--as", "other"]);
    assert!(!ok && err.contains("https://"), "{err}");

    for entry in [
        "http://registry.internal",
        "registry.internal/team",
        "Not A Host!",
    ] {
        std::fs::write(
            dir.path().join("toolhost.toml"),
            format!("[registries]\ninsecure = [{entry:?}]\n"),
        )
        .unwrap();
        let (ok, _, err) = toolhost(dir.path(), &["update"]);
        assert!(
            !ok && err.contains("in [registries]") && err.contains(entry),
            "{entry}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_registry_delays_its_reload_but_not_agent_edits() {
    use tokio::io::AsyncWriteExt as _;
    let component = std::fs::read(common::artifact("echo")).unwrap();
    let layer = Digest::of(&component);
    let config = oci::artifact::config(&layer, &[], &[]);
    let manifest = oci::artifact::manifest(
        &config,
        &layer,
        component.len() as u64,
        "echo.wasm",
        BTreeMap::new(),
    );
    let pinned = Digest::of(&manifest);
    // A registry that answers the manifest, then sends the component's
    // first kilobyte and nothing more.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stalled_tx, mut stalled) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (manifest, component, stalled_tx) =
                (manifest.clone(), component.clone(), stalled_tx.clone());
            tokio::spawn(async move {
                let head = common::server::read_head(&mut socket).await;
                if head.contains("/manifests/") {
                    let _ = socket
                        .write_all(&reply(
                            "200 OK",
                            &format!("content-type: {}\r\n", oci::artifact::MANIFEST_MEDIA_TYPE),
                            &manifest,
                        ))
                        .await;
                    return;
                }
                let _ = socket
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
                            component.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                let _ = socket.write_all(&component[..1024]).await;
                let _ = stalled_tx.send(());
                tokio::time::sleep(std::time::Duration::from_secs(120)).await;
            });
        }
    });
    let dir = common::host_dir(&["echo"], "");
    let host = Arc::new(common::load(dir.path()).await);
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!("[sources]\nslow = \"oci://127.0.0.1:{port}/slow:v1@{pinned}\"\n"),
    )
    .unwrap();
    let reloading = tokio::spawn({
        let host = Arc::clone(&host);
        async move { host.reload().await.map(|_| ()) }
    });
    tokio::time::timeout(std::time::Duration::from_secs(20), stalled.recv())
        .await
        .expect("the reload pulls")
        .unwrap();
    // The pull is stuck; an agent edit is not.
    let body = json!({ "tools": [], "components": ["echo"] });
    let made = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        host.create_agent("meanwhile", body.as_object().unwrap()),
    )
    .await
    .expect("an agent edit waited for a registry");
    made.unwrap();
    // Calls go on too, on the tools loaded before.
    let said = host
        .call("echo", json!({"text": "meanwhile"}), &common::live())
        .await
        .unwrap();
    assert!(
        said.result.to_string().contains("meanwhile"),
        "{}",
        said.result
    );
    assert!(
        !reloading.is_finished(),
        "the reload finished without its component"
    );
    reloading.abort();
}
