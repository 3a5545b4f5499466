//! Structure-aware mutations of the JSON inside an input: a JSON value that
//! starts a line is parsed, one of its nodes is replaced, removed, retyped
//! or swapped for a node of another seed, and the value is written back in
//! place. Inputs with no parsable JSON are left as they are.

use fastrand::Rng;
use serde_json::{Map, Value, json};

/// Mutate one JSON value inside `input`; `other` lends nodes to swap in.
pub(super) fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: Option<&[u8]>) {
    let Some((start, end, mut value)) = find_value(rng, input) else {
        return;
    };
    let donor = other.and_then(|o| find_value(rng, o)).map(|(_, _, v)| v);
    let node = pick(rng, &mut value);
    edit(rng, node, donor);
    let Ok(text) = serde_json::to_vec(&value) else {
        return;
    };
    input.splice(start..end, text);
}

/// A JSON value starting at the input's start or a line's, with its span.
fn find_value(rng: &mut Rng, input: &[u8]) -> Option<(usize, usize, Value)> {
    let starts: Vec<usize> = (0..input.len())
        .filter(|&i| matches!(input[i], b'{' | b'[') && (i == 0 || input[i - 1] == b'\n'))
        .collect();
    if starts.is_empty() {
        return None;
    }
    let start = starts[rng.usize(..starts.len())];
    let mut values = serde_json::Deserializer::from_slice(&input[start..]).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((start, start + values.byte_offset(), value))
}

/// A node of `value`: the root, or one found by a random walk down.
fn pick<'a>(rng: &mut Rng, value: &'a mut Value) -> &'a mut Value {
    let len = match &*value {
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        _ => 0,
    };
    if len == 0 || rng.u32(..3) == 0 {
        return value;
    }
    let at = rng.usize(..len);
    match value {
        Value::Array(items) => pick(rng, &mut items[at]),
        Value::Object(map) => match map.values_mut().nth(at) {
            Some(child) => pick(rng, child),
            None => unreachable!("`at` is below the map's length"),
        },
        _ => unreachable!("only arrays and objects have children"),
    }
}

/// Change one node.
fn edit(rng: &mut Rng, node: &mut Value, donor: Option<Value>) {
    match rng.u32(..6) {
        0 => *node = interesting(rng),
        1 => match node {
            Value::Object(map) if !map.is_empty() => {
                let at = rng.usize(..map.len());
                if let Some(key) = map.keys().nth(at).cloned() {
                    map.remove(&key);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(rng.usize(..items.len()));
            }
            _ => *node = Value::Null,
        },
        2 => match node {
            Value::Object(map) => {
                let key = map
                    .keys()
                    .nth(rng.usize(..=map.len()))
                    .map_or_else(|| "extra".to_string(), |k| format!("{k}_"));
                map.insert(key, interesting(rng));
            }
            Value::Array(items) => {
                let copy = items.last().cloned().unwrap_or(Value::Null);
                items.extend(std::iter::repeat_n(copy, rng.usize(1..=64)));
            }
            _ => *node = json!([node.clone()]),
        },
        3 => *node = retyped(node),
        4 => {
            if let Some(mut donor) = donor {
                *node = pick(rng, &mut donor).take();
            }
        }
        _ => *node = nested(rng.usize(1..=300)),
    }
}

/// The same content as another JSON type.
fn retyped(node: &Value) -> Value {
    match node {
        Value::String(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| json!([s]), Value::Number),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => json!(u8::from(*b)),
        Value::Null => json!({}),
        Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
        Value::Object(map) => Value::Array(map.values().cloned().collect()),
    }
}

/// Arrays and objects nested `depth` deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::Null, |inner, i| {
        if i % 2 == 0 {
            json!([inner])
        } else {
            let mut map = Map::new();
            map.insert("a".into(), inner);
            Value::Object(map)
        }
    })
}

/// A value at the edge of what a schema or a parser expects.
fn interesting(rng: &mut Rng) -> Value {
    match rng.u32(..16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(0),
        3 => json!(-1),
        4 => json!(i64::MIN),
        5 => json!(u64::MAX),
        6 => json!(1e308),
        7 => json!(-0.5),
        8 => json!(""),
        9 => json!("x".repeat(rng.usize(1..=70_000))),
        10 => json!("\u{0}\u{7f}\u{fffd}\u{10ffff}"),
        11 => json!("../../../etc/passwd"),
        12 => json!("2026-01-01T00:00:00Z"),
        13 => json!([]),
        14 => json!({}),
        _ => json!("9999-12-31T23:59:59+14:00"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_after_a_first_line_changes_and_the_line_stays() {
        let mut rng = Rng::with_seed(1);
        let mut changed = 0;
        for _ in 0..200 {
            let mut input = b"echo\n{\"text\": \"hi\", \"uppercase\": true}".to_vec();
            mutate(&mut rng, &mut input, Some(b"{\"by\": [1, 2]}"));
            assert!(input.starts_with(b"echo\n"));
            changed += usize::from(input != b"echo\n{\"text\":\"hi\",\"uppercase\":true}");
        }
        assert!(changed > 100, "{changed}");
    }

    #[test]
    fn inputs_without_json_are_left_alone() {
        let mut rng = Rng::with_seed(2);
        let mut input = b"GET /healthz".to_vec();
        mutate(&mut rng, &mut input, None);
        assert_eq!(input, b"GET /healthz");
    }
}
