use super::*;
use crate::redis_store::RedisOptions;
use crate::redis_store::RedisStore;
use store::{Host as _, HostBucket as _};
use toolhost_test_artifacts::redis::RedisServer;

/// What keeps a backend alive for one test.
enum Keep {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Server(#[allow(dead_code)] RedisServer),
}

fn embedded() -> (Keep, Arc<dyn KvBackend>) {
    let dir = tempfile::tempdir().unwrap();
    let backend = RedbBackend::open(&dir.path().join("kv.redb")).unwrap();
    (Keep::Dir(dir), Arc::new(backend))
}

fn on_redis() -> Option<(Keep, Arc<dyn KvBackend>)> {
    let server = RedisServer::start()?;
    let settings = RedisOptions::new(server.url());
    let store = RedisStore::open(&settings, &crate::redis_store::TEST_CLUSTER_KEY).unwrap();
    Some((Keep::Server(server), Arc::new(RedisBackend::new(store))))
}

/// Each test, once on the embedded store and once on a real Redis.
macro_rules! on_both_backends {
        ($(async fn $name:ident($kv:ident) $body:block)*) => {$(
            mod $name {
                use super::*;

                async fn run($kv: Arc<dyn KvBackend>) $body

                #[tokio::test]
                async fn embedded() {
                    let (_keep, kv) = super::embedded();
                    run(kv).await;
                }

                #[tokio::test]
                async fn redis() {
                    let Some((_keep, kv)) = super::on_redis() else { return };
                    run(kv).await;
                }
            }
        )*};
    }

fn view<'a>(ctx: &'a mut KvCtx, table: &'a mut ResourceTable) -> KvView<'a> {
    KvView { ctx, table }
}

fn again(bucket: &Resource<Bucket>) -> Resource<Bucket> {
    Resource::new_borrow(bucket.rep())
}

/// A read-only context on bucket `b` whose key `big` holds the largest
/// value, counting in the returned meter.
async fn reading_one_big_value(kv: Arc<dyn KvBackend>) -> (KvCtx, Arc<Meter>) {
    kv.set("b", "big", vec![7; MAX_VALUE_BYTES]).await.unwrap();
    let meter = Meter::new(HostBudget::default());
    let ctx = KvCtx::new(kv, vec!["b".into()], true).with_meter(meter.clone());
    (ctx, meter)
}

on_both_backends! {
    async fn round_trips_and_lists_per_bucket(kv) {
        kv.set("a", "k1", b"v1".to_vec()).await.unwrap();
        kv.set("a", "k2", b"v2".to_vec()).await.unwrap();
        kv.set("b", "k1", b"other".to_vec()).await.unwrap();
        assert_eq!(kv.get("a", "k1").await.unwrap().as_deref(), Some(&b"v1"[..]));
        assert_eq!(kv.get("a", "nope").await.unwrap(), None);
        assert_eq!(kv.list_keys("a", None, 10).await.unwrap(), ["k1", "k2"]);
        assert_eq!(kv.list_keys("a", Some("k1"), 10).await.unwrap(), ["k2"]);
        assert_eq!(kv.list_keys("a", Some("k0"), 10).await.unwrap(), ["k1", "k2"]);
        assert_eq!(kv.list_keys("b", None, 10).await.unwrap(), ["k1"]);
        assert!(kv.list_keys("none", None, 10).await.unwrap().is_empty());
        kv.delete("a", "k1").await.unwrap();
        kv.delete("a", "absent").await.unwrap();
        assert_eq!(kv.get("a", "k1").await.unwrap(), None);
        assert_eq!(kv.list_keys("a", None, 10).await.unwrap(), ["k2"]);
    }

    async fn buckets_with_separators_never_collide(kv) {
        kv.set("a:b", "c", b"1".to_vec()).await.unwrap();
        kv.set("a", "b:c", b"2".to_vec()).await.unwrap();
        assert_eq!(kv.get("a:b", "c").await.unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(kv.get("a", "b:c").await.unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(kv.list_keys("a", None, 10).await.unwrap(), ["b:c"]);
        assert_eq!(kv.list_keys("a:b", None, 10).await.unwrap(), ["c"]);
    }

    async fn values_are_bytes_and_keys_sort_by_bytes(kv) {
        let binary: Vec<u8> = (0..=255).collect();
        kv.set("b", "bin", binary.clone()).await.unwrap();
        assert_eq!(kv.get("b", "bin").await.unwrap(), Some(binary));
        kv.set("b", "empty", Vec::new()).await.unwrap();
        assert_eq!(kv.get("b", "empty").await.unwrap(), Some(Vec::new()));
        for key in ["é", "Z", "a", "a\u{0}", "[", "(x", "-", "+"] {
            kv.set("s", key, Vec::new()).await.unwrap();
        }
        assert_eq!(
            kv.list_keys("s", None, 100).await.unwrap(),
            ["(x", "+", "-", "Z", "[", "a", "a\u{0}", "é"]
        );
        assert_eq!(kv.list_keys("s", Some("["), 2).await.unwrap(), ["a", "a\u{0}"]);
    }

    async fn pages_walk_every_key_once(kv) {
        let pairs: Vec<(String, Vec<u8>)> =
            (0..2500).map(|i| (format!("k{i:05}"), vec![1])).collect();
        kv.set_many("p", pairs).await.unwrap();
        let (mut seen, mut after) = (Vec::new(), None::<String>);
        loop {
            let page = kv.list_keys("p", after.as_deref(), LIST_PAGE).await.unwrap();
            let full = page.len() == LIST_PAGE;
            after = page.last().cloned();
            seen.extend(page);
            if !full {
                break;
            }
        }
        let expected: Vec<String> = (0..2500).map(|i| format!("k{i:05}")).collect();
        assert_eq!(seen, expected);
    }

    async fn counters_add_atomically_and_refuse_what_they_cannot(kv) {
        assert_eq!(kv.increment("a", "n", 5).await.unwrap(), 5);
        assert_eq!(kv.increment("a", "n", -2).await.unwrap(), 3);
        assert_eq!(kv.get("a", "n").await.unwrap().as_deref(), Some(&b"3"[..]));
        assert_eq!(kv.list_keys("a", None, 10).await.unwrap(), ["n"]);
        kv.set("a", "text", b"v1".to_vec()).await.unwrap();
        let err = kv.increment("a", "text", 1).await.unwrap_err().to_string();
        assert!(err.contains("not an integer counter"), "{err}");
        assert_eq!(kv.get("a", "text").await.unwrap().as_deref(), Some(&b"v1"[..]));
        assert_eq!(kv.increment("a", "big", i64::MAX - 1).await.unwrap(), i64::MAX - 1);
        assert_eq!(kv.increment("a", "big", 1).await.unwrap(), i64::MAX);
        let err = kv.increment("a", "big", 1).await.unwrap_err().to_string();
        assert!(err.contains("overflows"), "{err}");
        assert_eq!(kv.increment("a", "big", 0).await.unwrap(), i64::MAX);
        let many = (0..64).map(|_| {
            let kv = kv.clone();
            tokio::spawn(async move { kv.increment("a", "c", 1).await.unwrap() })
        });
        let mut answers: Vec<i64> = Vec::new();
        for task in many.collect::<Vec<_>>() {
            answers.push(task.await.unwrap());
        }
        answers.sort_unstable();
        assert_eq!(answers, (1..=64).collect::<Vec<_>>());
    }

    async fn compare_and_swap_compares_the_stored_bytes(kv) {
        assert!(!kv.compare_and_swap("a", "k", Some(b"x".to_vec()), b"y".to_vec()).await.unwrap());
        assert_eq!(kv.get("a", "k").await.unwrap(), None);
        assert!(kv.compare_and_swap("a", "k", None, b"v1".to_vec()).await.unwrap());
        assert!(!kv.compare_and_swap("a", "k", None, b"v2".to_vec()).await.unwrap());
        assert!(!kv.compare_and_swap("a", "k", Some(b"v".to_vec()), b"x".to_vec()).await.unwrap());
        assert!(!kv.compare_and_swap("a", "k", Some(Vec::new()), b"x".to_vec()).await.unwrap());
        assert!(kv.compare_and_swap("a", "k", Some(b"v1".to_vec()), b"v2".to_vec()).await.unwrap());
        assert_eq!(kv.get("a", "k").await.unwrap().as_deref(), Some(&b"v2"[..]));
        assert_eq!(kv.list_keys("a", None, 10).await.unwrap(), ["k"]);
        kv.set("a", "e", Vec::new()).await.unwrap();
        assert!(!kv.compare_and_swap("a", "e", None, b"x".to_vec()).await.unwrap(),
            "an empty value is a value, not an absent key");
        assert!(kv.compare_and_swap("a", "e", Some(Vec::new()), b"x".to_vec()).await.unwrap());
    }

    async fn batches_set_read_and_delete_together(kv) {
        kv.set_many("m", vec![("a".into(), b"1".to_vec()), ("b".into(), b"2".to_vec())])
            .await
            .unwrap();
        kv.set_many("m", Vec::new()).await.unwrap();
        let keys = ["a".to_string(), "x".into(), "b".into()];
        let many = kv.get_many("m", &keys, 1 << 20).await.unwrap();
        assert_eq!(many, ManyValues {
            values: vec![Some(b"1".to_vec()), None, Some(b"2".to_vec())],
            stopped_at: None,
        });
        let short = kv.get_many("m", &keys, 1).await.unwrap();
        assert_eq!(short, ManyValues {
            values: vec![Some(b"1".to_vec()), None],
            stopped_at: Some(1),
        }, "the second value does not fit in what is left of 1 byte");
        kv.delete_many("m", vec!["a".into(), "x".into()]).await.unwrap();
        kv.delete_many("m", Vec::new()).await.unwrap();
        assert_eq!(kv.list_keys("m", None, 10).await.unwrap(), ["b"]);
    }

    async fn only_granted_buckets_open(kv) {
        let mut ctx = KvCtx::new(kv, vec!["allowed".into()], false);
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        assert!(view.open("allowed".into()).await.is_ok());
        assert!(matches!(
            view.open("other".into()).await,
            Err(store::Error::AccessDenied)
        ));
        let mut denied = KvCtx::deny_all();
        let mut view = super::view(&mut denied, &mut table);
        assert!(matches!(
            view.open("allowed".into()).await,
            Err(store::Error::AccessDenied)
        ));
    }

    async fn read_only_handles_refuse_writes_but_read(kv) {
        kv.set("b", "k", b"v".to_vec()).await.unwrap();
        let mut ctx = KvCtx::new(kv.clone(), vec!["b".into()], true);
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        let bucket = view.open("b".into()).await.unwrap();
        assert_eq!(
            view.get(again(&bucket), "k".into()).await.unwrap().as_deref(),
            Some(&b"v"[..])
        );
        assert!(matches!(
            view.set(again(&bucket), "k".into(), b"x".to_vec()).await,
            Err(store::Error::AccessDenied)
        ));
        assert!(matches!(
            atomics::Host::increment(&mut view, again(&bucket), "n".into(), 1).await,
            Err(store::Error::AccessDenied)
        ));
        assert!(matches!(
            batch::Host::delete_many(&mut view, again(&bucket), vec!["k".into()]).await,
            Err(store::Error::AccessDenied)
        ));
        assert_eq!(kv.get("b", "k").await.unwrap().as_deref(), Some(&b"v"[..]));
    }

    async fn the_operation_cap_spans_every_attempt_of_a_call(kv) {
        let meter = Meter::new(HostBudget::default());
        let keys: Vec<String> = (0..6000).map(|i| format!("k{i}")).collect();
        let mut table = ResourceTable::new();
        for attempt in 1..=2 {
            let mut ctx =
                KvCtx::new(kv.clone(), vec!["b".into()], true).with_meter(meter.clone());
            let mut view = view(&mut ctx, &mut table);
            let bucket = view.open("b".into()).await.unwrap();
            let result = batch::Host::get_many(&mut view, bucket, keys.clone()).await;
            match attempt {
                1 => assert!(result.is_ok()),
                _ => assert!(
                    matches!(result, Err(store::Error::Other(m)) if m.contains("limit")),
                    "6000 + 6000 keys is over the per-call cap"
                ),
            }
        }
    }

    async fn a_batch_read_is_charged_against_the_host_budget(kv) {
        let (mut ctx, meter) = reading_one_big_value(kv).await;
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        let bucket = view.open("b".into()).await.unwrap();
        let few = vec!["big".to_string(); 4];
        let answer = batch::Host::get_many(&mut view, again(&bucket), few).await.unwrap();
        assert_eq!(answer.len(), 4);
        let many = vec!["big".to_string(); 4000];
        let err = batch::Host::get_many(&mut view, again(&bucket), many)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, store::Error::Other(m) if m.contains("host memory cap hit")),
            "{err:?}"
        );
        let usage = meter.usage(
            std::time::Duration::ZERO,
            1,
            crate::usage::HttpTally::default(),
        );
        assert!(usage.peak_host_bytes <= 32 << 20, "{usage:?}");
        assert_eq!(usage.limit.map(|l| l.name.name()), Some("host_memory"));
        assert_eq!(meter.available(), meter.host_limit(), "every charge is given back");
    }

    async fn compare_and_swap_handles_hold_their_snapshot_against_the_budget(kv) {
        let (mut ctx, _) = reading_one_big_value(kv).await;
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        let bucket = view.open("b".into()).await.unwrap();
        let mut held = Vec::new();
        let err = loop {
            match atomics::HostCas::new(&mut view, again(&bucket), "big".into()).await {
                Ok(cas) => held.push(cas),
                Err(err) => break err,
            }
            assert!(held.len() < 100, "the budget never ran out");
        };
        assert!(matches!(&err, store::Error::Other(m) if m.contains("host memory cap hit")));
        assert_eq!(
            held.len(),
            31,
            "32 MiB holds 31 snapshots of 1 MiB and their keys"
        );
        let first = held.remove(0);
        atomics::HostCas::drop(&mut view, first).await.unwrap();
        assert!(
            atomics::HostCas::new(&mut view, again(&bucket), "big".into())
                .await
                .is_ok(),
            "dropping a handle gives its memory back"
        );
    }

    async fn a_failed_swap_hands_back_the_value_now_stored(kv) {
        kv.set("b", "k", b"one".to_vec()).await.unwrap();
        let mut ctx = KvCtx::new(kv.clone(), vec!["b".into()], false);
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        let bucket = view.open("b".into()).await.unwrap();
        let cas = atomics::HostCas::new(&mut view, again(&bucket), "k".into()).await.unwrap();
        kv.set("b", "k", b"two".to_vec()).await.unwrap();
        let Err(atomics::CasError::CasFailed(retry)) =
            atomics::Host::swap(&mut view, cas, b"mine".to_vec()).await
        else {
            panic!("the value changed under the handle: the swap must fail");
        };
        let now = atomics::HostCas::current(&mut view, Resource::new_borrow(retry.rep()))
            .await
            .unwrap();
        assert_eq!(now.as_deref(), Some(&b"two"[..]));
        atomics::Host::swap(&mut view, retry, b"mine".to_vec()).await.unwrap();
        assert_eq!(kv.get("b", "k").await.unwrap().as_deref(), Some(&b"mine"[..]));
    }

    async fn oversized_values_are_refused(kv) {
        let mut ctx = KvCtx::new(kv, vec!["b".into()], false);
        let mut table = ResourceTable::new();
        let mut view = view(&mut ctx, &mut table);
        let bucket = view.open("b".into()).await.unwrap();
        let err = view
            .set(bucket, "k".into(), vec![0; MAX_VALUE_BYTES + 1])
            .await
            .unwrap_err();
        assert!(matches!(err, store::Error::Other(m) if m.contains("limit")));
    }
}

#[tokio::test]
async fn a_redis_that_is_down_is_an_error_naming_it_and_then_recovers() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let settings = RedisOptions::new(server.url());
    let kv = RedisBackend::new(
        RedisStore::open(&settings, &crate::redis_store::TEST_CLUSTER_KEY).unwrap(),
    );
    assert_eq!(kv.increment("b", "n", 1).await.unwrap(), 1);
    server.kill();
    let err = kv.increment("b", "n", 1).await.unwrap_err().to_string();
    assert!(err.contains(&format!("Redis at {}", server.url())), "{err}");
    server.restart().unwrap();
    let mut answer = kv.increment("b", "n", 1).await;
    for _ in 0..50 {
        if answer.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        answer = kv.increment("b", "n", 1).await;
    }
    assert_eq!(
        answer.unwrap(),
        2,
        "the acknowledged increment survived the restart"
    );
}
