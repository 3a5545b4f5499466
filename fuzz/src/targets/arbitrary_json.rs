//! JSON values built from raw bytes with `arbitrary`: the fallback that
//! gives inputs without the text form (random bytes) a well-formed shape.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// How deep generated values nest.
const MAX_DEPTH: u32 = 4;

/// A JSON value whose object keys come mostly from `keys`.
pub(super) fn value(u: &mut Unstructured<'_>, keys: &[&str]) -> Result<Value> {
    nested(u, keys, MAX_DEPTH)
}

/// An object whose keys come mostly from `keys`.
pub(super) fn object(u: &mut Unstructured<'_>, keys: &[&str]) -> Result<Map<String, Value>> {
    object_at(u, keys, MAX_DEPTH)
}

fn nested(u: &mut Unstructured<'_>, keys: &[&str], depth: u32) -> Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.choose_index(kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(u.arbitrary::<i64>()?.into()),
        3 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        4 => Value::String(u.arbitrary()?),
        5 => {
            let len = u.int_in_range(0..=4)?;
            let items = (0..len)
                .map(|_| nested(u, keys, depth - 1))
                .collect::<Result<Vec<_>>>()?;
            Value::Array(items)
        }
        _ => Value::Object(object_at(u, keys, depth - 1)?),
    })
}

fn object_at(u: &mut Unstructured<'_>, keys: &[&str], depth: u32) -> Result<Map<String, Value>> {
    let len = u.int_in_range(0..=5)?;
    let mut map = Map::new();
    for _ in 0..len {
        let key = if !keys.is_empty() && u.ratio(4, 5)? {
            (*u.choose(keys)?).to_string()
        } else {
            u.arbitrary()?
        };
        map.insert(key, nested(u, keys, depth)?);
    }
    Ok(map)
}
