use super::*;

/// The content `n`: a distinct hash per `n`.
fn component(n: u8) -> Vec<u8> {
    vec![n; 8]
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Store a compilation of `bytes` (1000 bytes standing for one).
fn compile(cache: &CompileCache, bytes: &[u8]) {
    cache.store(&sha(bytes), &[bytes[0]; 1000]);
}

/// Load `bytes`' compilation as the engine does: take the entry, mark it used.
fn load(cache: &CompileCache, bytes: &[u8]) -> Option<Entry> {
    let entry = cache.entry(&sha(bytes))?;
    cache.used(&entry.path);
    Some(entry)
}

fn shared(dir: &Path, key: &[u8]) -> SharedCompileCache {
    SharedCompileCache {
        dir: dir.to_path_buf(),
        key: key.into(),
    }
}

#[test]
fn a_shared_entry_loads_only_as_the_cluster_key_wrote_it() {
    let (a, b, folder) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let key = [7u8; 32];
    let writer =
        CompileCache::open(a.path(), "e", u64::MAX, Some(&shared(folder.path(), &key))).unwrap();
    let bytes = component(1);
    compile(&writer, &bytes);
    let reader =
        CompileCache::open(b.path(), "e", u64::MAX, Some(&shared(folder.path(), &key))).unwrap();
    let entry = load(&reader, &bytes).expect("another server loads it");
    assert_eq!(
        entry.verified.as_deref(),
        Some(&[1u8; 1000][..]),
        "the tag is not handed out"
    );

    let stranger = CompileCache::open(
        b.path(),
        "e",
        u64::MAX,
        Some(&shared(folder.path(), &[8; 32])),
    )
    .unwrap();
    assert!(stranger.entry(&sha(&bytes)).is_none(), "another key");
    let path = writer.entry_path(&sha(&bytes));
    std::fs::copy(&path, writer.entry_path(&sha(&component(2)))).unwrap();
    assert!(
        reader.entry(&sha(&component(2))).is_none(),
        "a tag is for one content: a valid entry under another content's name is refused"
    );
    let mut tampered = std::fs::read(&path).unwrap();
    tampered[10] ^= 1;
    std::fs::write(&path, &tampered).unwrap();
    assert!(reader.entry(&sha(&bytes)).is_none(), "a changed byte");
    std::fs::write(&path, [1u8; 1000]).unwrap();
    assert!(
        reader.entry(&sha(&bytes)).is_none(),
        "no tag, as a local cache writes it"
    );
    std::fs::write(&path, [1u8; 3]).unwrap();
    assert!(reader.entry(&sha(&bytes)).is_none(), "shorter than a tag");
    let local = CompileCache::open(folder.path(), "e", u64::MAX, None).unwrap();
    compile(&local, &bytes);
    assert!(
        reader.entry(&sha(&bytes)).is_none(),
        "written by a local cache in that folder"
    );
    // The file index stays each server's own.
    assert!(!folder.path().join(INDEX_DIR).exists());
}

#[test]
fn eviction_in_a_shared_folder_leaves_what_a_server_touched_lately() {
    let (own, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let options = shared(folder.path(), &[7; 32]);
    let cache = CompileCache::open(own.path(), "e", 1, Some(&options)).unwrap();
    let (live, stale) = (component(1), component(2));
    compile(&cache, &live);
    compile(&cache, &stale);
    let old = SystemTime::now() - LIVE_WINDOW - Duration::from_secs(60);
    for bytes in [&live, &stale] {
        std::fs::File::options()
            .write(true)
            .open(cache.entry_path(&sha(bytes)))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    cache.keep(&[sha(&live)].into_iter().collect());
    let reopened = CompileCache::open(own.path(), "e", 1, Some(&options)).unwrap();
    assert!(
        reopened.holds(&sha(&live)),
        "touched by a live version: kept past the cap"
    );
    assert!(!reopened.holds(&sha(&stale)), "not touched lately: evicted");
}

fn entry_len(cache: &CompileCache, bytes: &[u8]) -> u64 {
    std::fs::metadata(cache.entry_path(&sha(bytes)))
        .unwrap()
        .len()
}

#[test]
fn the_least_recently_used_compilation_goes_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (component(1), component(2), component(3));
    let unbounded = CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    compile(&unbounded, &a);
    let len = entry_len(&unbounded, &a);

    let cache = CompileCache::open(dir.path(), "e", len * 5 / 2, None).unwrap();
    compile(&cache, &b);
    assert!(cache.holds(&sha(&a)) && cache.holds(&sha(&b)), "two fit");
    assert!(load(&cache, &a).is_some());
    compile(&cache, &c);
    assert!(cache.holds(&sha(&a)), "used after b, so kept");
    assert!(!cache.holds(&sha(&b)), "the least recently used goes");
    assert!(cache.holds(&sha(&c)), "the one just written stays");
}

#[test]
fn entries_others_could_have_written_are_not_loaded() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let cache = CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    let bytes = component(1);
    compile(&cache, &bytes);
    let entry = cache.entry_path(&sha(&bytes));
    assert!(cache.entry(&sha(&bytes)).is_some());
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(cache.entry(&sha(&bytes)).is_none(), "world-writable");
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644)).unwrap();
    let real = entry.with_extension("real");
    std::fs::rename(&entry, &real).unwrap();
    std::os::unix::fs::symlink(&real, &entry).unwrap();
    assert!(cache.entry(&sha(&bytes)).is_none(), "a symlink");
}

#[test]
fn compilations_of_another_engine_are_not_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = component(1);
    compile(
        &CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap(),
        &bytes,
    );
    let other = CompileCache::open(dir.path(), "f", u64::MAX, None).unwrap();
    assert!(!other.holds(&sha(&bytes)) && other.entry(&sha(&bytes)).is_none());
}

#[test]
fn the_entry_just_written_stays_even_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let cache = CompileCache::open(dir.path(), "e", 1, None).unwrap();
    compile(&cache, &component(1));
    compile(&cache, &component(2));
    assert!(!cache.holds(&sha(&component(1))));
    assert!(cache.holds(&sha(&component(2))));
    let reopened = CompileCache::open(dir.path(), "e", 1, None).unwrap();
    assert!(
        !reopened.holds(&sha(&component(2))),
        "over the cap at the next open"
    );
}

#[test]
fn a_recorded_file_loads_without_reading_until_it_or_its_compilation_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let cache = CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    let (one, two) = (tools.path().join("one.wasm"), tools.path().join("two.wasm"));
    for (file, n) in [(&one, 1), (&two, 2)] {
        std::fs::write(file, component(n)).unwrap();
        compile(&cache, &component(n));
        cache.record(file, FileStamp::of(file).unwrap(), &sha(&component(n)));
    }
    let stamp = FileStamp::of(&one).unwrap();
    let recorded = cache.recorded(&one, stamp).expect("the index hit");
    assert_eq!(recorded, sha(&component(1)));
    assert_eq!(
        std::fs::read_dir(dir.path().join(INDEX_DIR))
            .unwrap()
            .count(),
        2
    );

    std::fs::remove_file(&one).unwrap();
    std::fs::remove_file(cache.entry_path(&sha(&component(2)))).unwrap();
    CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path().join(INDEX_DIR))
            .unwrap()
            .count(),
        0,
        "a deleted tool file's entry and a deleted compilation's entry are pruned"
    );
}

#[test]
fn the_names_a_file_gave_are_kept_while_its_stamp_and_content_are() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let cache = CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    let file = tools.path().join("shapes.wasm");
    std::fs::write(&file, component(1)).unwrap();
    let stamp = FileStamp::of(&file).unwrap();
    let names = vec!["shapes_add".to_string(), "shapes_divide".to_string()];
    cache.record_names(&file, stamp, &names);
    assert_eq!(
        cache.recorded_names(&file, stamp),
        None,
        "no entry to add to"
    );

    cache.record(&file, stamp, &sha(&component(1)));
    assert_eq!(cache.recorded_names(&file, stamp), None, "not loaded yet");
    cache.record_names(&file, stamp, &names);
    assert_eq!(cache.recorded_names(&file, stamp), Some(names.clone()));
    cache.record(&file, stamp, &sha(&component(1)));
    assert_eq!(
        cache.recorded_names(&file, stamp),
        Some(names),
        "the same content keeps its names"
    );
    assert_eq!(
        cache.recorded(&file, stamp),
        Some(sha(&component(1))),
        "names leave the content's line as it was"
    );

    cache.record(&file, stamp, &sha(&component(2)));
    assert_eq!(cache.recorded_names(&file, stamp), None, "other content");
    std::fs::write(&file, component(3)).unwrap();
    let later = FileStamp::of(&file).unwrap();
    cache.record_names(&file, later, &["x".to_string()]);
    assert_eq!(cache.recorded_names(&file, later), None, "another stamp");
}

#[test]
fn index_entries_without_a_path_still_load() {
    let sha256 = "a".repeat(64);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("entry");
    std::fs::write(&path, format!("12 345 678 {sha256}\n")).unwrap();
    let entry = IndexEntry::read(&path).expect("the old format");
    assert_eq!(
        (entry.stamp.as_str(), entry.sha256.as_str()),
        ("12 345 678", sha256.as_str())
    );
    assert_eq!(entry.file, None);
    std::fs::write(&path, "12 345 678 short\n").unwrap();
    assert!(IndexEntry::read(&path).is_none());
}

#[test]
fn abandoned_writes_are_removed_once_an_hour_old() {
    let dir = tempfile::tempdir().unwrap();
    let (old, young) = (dir.path().join(".tmpOLD"), dir.path().join(".tmpNEW"));
    for path in [&old, &young] {
        std::fs::write(path, b"half").unwrap();
    }
    let two_hours_ago = SystemTime::now() - Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .and_then(|f| f.set_modified(two_hours_ago))
        .unwrap();
    CompileCache::open(dir.path(), "e", u64::MAX, None).unwrap();
    assert!(!old.exists());
    assert!(young.exists(), "another host may be writing it now");
}
