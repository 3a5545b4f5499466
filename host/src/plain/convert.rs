//! JSON to component values and back, in the encoding [`super::schema`]
//! describes. Input is validated against the schema first; these checks
//! still name the JSON pointer of anything that does not fit.

use serde_json::{Map, Value, json};
use wasmtime::component::Val;
use wasmtime::component::types::Type;

/// The value of type `ty` that `json` (at `pointer`) stands for.
pub fn to_val(json: &Value, ty: &Type, pointer: &str) -> Result<Val, String> {
    let wrong = |expected: &str| Err(format!("{pointer}: expected {expected}, got {json}"));
    Ok(match ty {
        Type::Bool => match json.as_bool() {
            Some(b) => Val::Bool(b),
            None => return wrong("a boolean"),
        },
        Type::S8 => Val::S8(int(json, pointer)?),
        Type::U8 => Val::U8(int(json, pointer)?),
        Type::S16 => Val::S16(int(json, pointer)?),
        Type::U16 => Val::U16(int(json, pointer)?),
        Type::S32 => Val::S32(int(json, pointer)?),
        Type::U32 => Val::U32(int(json, pointer)?),
        Type::S64 => Val::S64(int(json, pointer)?),
        Type::U64 => Val::U64(int(json, pointer)?),
        #[allow(clippy::cast_possible_truncation)]
        Type::Float32 => match json.as_f64() {
            Some(f) => Val::Float32(f as f32),
            None => return wrong("a number"),
        },
        Type::Float64 => match json.as_f64() {
            Some(f) => Val::Float64(f),
            None => return wrong("a number"),
        },
        Type::Char => {
            let mut chars = json.as_str().unwrap_or_default().chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return wrong("a one-character string"),
            }
        }
        Type::String => match json.as_str() {
            Some(s) => Val::String(s.to_string()),
            None => return wrong("a string"),
        },
        Type::List(list) => {
            let Some(items) = json.as_array() else {
                return wrong("an array");
            };
            let ty = list.ty();
            Val::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| to_val(item, &ty, &format!("{pointer}/{i}")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Tuple(tuple) => {
            let types: Vec<Type> = tuple.types().collect();
            match json.as_array() {
                Some(items) if items.len() == types.len() => Val::Tuple(
                    items
                        .iter()
                        .zip(&types)
                        .enumerate()
                        .map(|(i, (item, ty))| to_val(item, ty, &format!("{pointer}/{i}")))
                        .collect::<Result<_, _>>()?,
                ),
                _ => return wrong(&format!("an array of {} items", types.len())),
            }
        }
        Type::Record(record) => {
            let Some(object) = json.as_object() else {
                return wrong("an object");
            };
            let mut fields = Vec::new();
            for field in record.fields() {
                let at = format!("{pointer}/{}", field.name);
                let value = match (object.get(field.name), &field.ty) {
                    (Some(value), ty) => to_val(value, ty, &at)?,
                    (None, Type::Option(_)) => Val::Option(None),
                    (None, _) => return Err(format!("{at}: missing")),
                };
                fields.push((field.name.to_string(), value));
            }
            Val::Record(fields)
        }
        Type::Variant(variant) => {
            let (name, payload) = case_of(json);
            let Some(case) = variant.cases().find(|c| Some(c.name) == name) else {
                let names: Vec<&str> = variant.cases().map(|c| c.name).collect();
                return wrong(&format!("one of the cases {}", names.join(", ")));
            };
            let payload = match (&case.ty, payload) {
                (None, None) => None,
                (Some(ty), Some(value)) => Some(Box::new(to_val(
                    value,
                    ty,
                    &format!("{pointer}/{}", case.name),
                )?)),
                (None, Some(_)) => return wrong(&format!("\"{}\" (it has no payload)", case.name)),
                (Some(_), None) => return wrong(&format!("{{\"{}\": payload}}", case.name)),
            };
            Val::Variant(case.name.to_string(), payload)
        }
        Type::Enum(enum_) => match json.as_str() {
            Some(name) if enum_.names().any(|n| n == name) => Val::Enum(name.to_string()),
            _ => {
                let names: Vec<&str> = enum_.names().collect();
                return wrong(&format!("one of {}", names.join(", ")));
            }
        },
        Type::Option(option) => match json {
            Value::Null => Val::Option(None),
            value => Val::Option(Some(Box::new(to_val(value, &option.ty(), pointer)?))),
        },
        Type::Result(result) => {
            let side = |ty: Option<Type>, value: &Value, key: &str| match ty {
                Some(ty) => {
                    to_val(value, &ty, &format!("{pointer}/{key}")).map(|v| Some(Box::new(v)))
                }
                None => Ok(None),
            };
            match case_of(json) {
                (Some("ok"), Some(value)) => Val::Result(Ok(side(result.ok(), value, "ok")?)),
                (Some("err"), Some(value)) => Val::Result(Err(side(result.err(), value, "err")?)),
                _ => return wrong("{\"ok\": value} or {\"err\": value}"),
            }
        }
        Type::Flags(flags) => {
            let Some(items) = json.as_array() else {
                return wrong("an array of flag names");
            };
            let mut set = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(name) if flags.names().any(|n| n == name) => set.push(name.to_string()),
                    _ => {
                        let names: Vec<&str> = flags.names().collect();
                        return wrong(&format!("flag names among {}", names.join(", ")));
                    }
                }
            }
            Val::Flags(set)
        }
        _ => return Err(format!("{pointer}: this type cannot be written as JSON")),
    })
}

/// The JSON of a value.
pub fn to_json(val: &Val) -> Value {
    match val {
        Val::Bool(b) => json!(b),
        Val::S8(n) => json!(n),
        Val::U8(n) => json!(n),
        Val::S16(n) => json!(n),
        Val::U16(n) => json!(n),
        Val::S32(n) => json!(n),
        Val::U32(n) => json!(n),
        Val::S64(n) => json!(n),
        Val::U64(n) => json!(n),
        Val::Float32(f) => json!(f),
        Val::Float64(f) => json!(f),
        Val::Char(c) => json!(c.to_string()),
        Val::String(s) => json!(s),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        Val::Record(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, value)| (name.clone(), to_json(value)))
                .collect(),
        ),
        Val::Variant(name, None) | Val::Enum(name) => json!(name),
        Val::Variant(name, Some(payload)) => keyed(name, to_json(payload)),
        Val::Option(None) => Value::Null,
        Val::Option(Some(value)) => to_json(value),
        Val::Result(Ok(value)) => keyed("ok", value.as_deref().map_or(Value::Null, to_json)),
        Val::Result(Err(value)) => keyed("err", value.as_deref().map_or(Value::Null, to_json)),
        Val::Flags(names) => json!(names),
        Val::Map(entries) => Value::Array(
            entries
                .iter()
                .map(|(k, v)| json!([to_json(k), to_json(v)]))
                .collect(),
        ),
        Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => Value::Null,
    }
}

/// What [`to_json`] would make of a value, counted before it is made: the
/// JSON values (object keys included) and at least how many bytes of JSON
/// text, so a result too big to convert is refused without converting it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonSize {
    /// Values and object keys.
    pub values: usize,
    /// The fewest bytes of JSON text they take.
    pub bytes: usize,
}

impl JsonSize {
    /// The size of `val` as JSON.
    pub fn of(val: &Val) -> Self {
        let mut size = Self::default();
        size.add(val);
        size
    }

    fn count(&mut self, values: usize, bytes: usize) {
        self.values = self.values.saturating_add(values);
        self.bytes = self.bytes.saturating_add(bytes);
    }

    fn add(&mut self, val: &Val) {
        // Each value also takes a separator or a bracket.
        match val {
            Val::String(text) => self.count(1, text.len() + 3),
            Val::Char(_) => self.count(1, 4),
            Val::Variant(name, None) | Val::Enum(name) => self.count(1, name.len() + 3),
            Val::Flags(names) => self.count(
                1 + names.len(),
                2 + names.iter().map(|n| n.len() + 3).sum::<usize>(),
            ),
            Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
                self.count(1, 2);
                items.iter().for_each(|item| self.add(item));
            }
            Val::Record(fields) => {
                self.count(1, 2);
                for (name, value) in fields {
                    self.count(1, name.len() + 3);
                    self.add(value);
                }
            }
            Val::Variant(name, Some(payload)) => {
                self.count(2, name.len() + 5);
                self.add(payload);
            }
            Val::Option(Some(value)) => self.add(value),
            Val::Result(Ok(value) | Err(value)) => {
                self.count(2, 7);
                if let Some(value) = value {
                    self.add(value);
                }
            }
            Val::Map(entries) => {
                self.count(1, 2);
                for (key, value) in entries {
                    self.count(1, 3);
                    self.add(key);
                    self.add(value);
                }
            }
            _ => self.count(1, 2),
        }
    }
}

/// `"name"` or `{"name": payload}`: a variant case as JSON.
fn case_of(json: &Value) -> (Option<&str>, Option<&Value>) {
    match json {
        Value::String(name) => (Some(name), None),
        Value::Object(object) if object.len() == 1 => {
            let (name, payload) = object
                .iter()
                .next()
                .map_or(("", &Value::Null), |(k, v)| (k.as_str(), v));
            (Some(name), Some(payload))
        }
        _ => (None, None),
    }
}

fn keyed(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_string(), value);
    Value::Object(map)
}

/// An integer of type `T` from JSON, or an error naming the range.
fn int<T>(json: &Value, pointer: &str) -> Result<T, String>
where
    T: TryFrom<i64> + TryFrom<u64> + std::fmt::Display + num_bounds::Bounded,
{
    let value = json
        .as_i64()
        .and_then(|n| T::try_from(n).ok())
        .or_else(|| json.as_u64().and_then(|n| T::try_from(n).ok()));
    value.ok_or_else(|| {
        format!(
            "{pointer}: expected an integer from {} to {}, got {json}",
            T::MIN_VALUE,
            T::MAX_VALUE
        )
    })
}

/// The range of each integer type, for messages.
mod num_bounds {
    /// An integer type's smallest and largest values.
    pub trait Bounded: Sized {
        const MIN_VALUE: Self;
        const MAX_VALUE: Self;
    }

    macro_rules! bounded {
        ($($t:ty),*) => {$(
            impl Bounded for $t {
                const MIN_VALUE: Self = <$t>::MIN;
                const MAX_VALUE: Self = <$t>::MAX;
            }
        )*};
    }

    bounded!(i8, u8, i16, u16, i32, u32, i64, u64);
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_size_counts_what_to_json_makes_without_making_it() {
        let val = Val::Record(vec![
            ("name".into(), Val::String("ada".into())),
            ("bytes".into(), Val::List(vec![Val::U8(1); 1000])),
        ]);
        let size = JsonSize::of(&val);
        let json = to_json(&val);
        assert_eq!(
            size.values,
            1 + 2 + 1 + 1 + 1000,
            "the record, 2 keys, 2 values, 1000 items"
        );
        assert!(
            size.bytes <= json.to_string().len() + 8,
            "{size:?} vs {}",
            json.to_string().len()
        );
        assert!(size.bytes >= 2000, "{size:?}");
    }

    use super::*;

    #[test]
    fn values_round_trip_through_json() {
        let val = Val::Record(vec![
            ("x".into(), Val::Float64(1.5)),
            (
                "label".into(),
                Val::Option(Some(Box::new(Val::String("a".into())))),
            ),
            (
                "shape".into(),
                Val::Variant("circle".into(), Some(Box::new(Val::Float64(2.0)))),
            ),
            ("size".into(), Val::Enum("small".into())),
            (
                "r".into(),
                Val::Result(Err(Some(Box::new(Val::String("no".into()))))),
            ),
            ("f".into(), Val::Flags(vec!["read".into()])),
            ("t".into(), Val::Tuple(vec![Val::U32(7), Val::Char('x')])),
        ]);
        assert_eq!(
            to_json(&val),
            json!({
                "x": 1.5, "label": "a", "shape": {"circle": 2.0}, "size": "small",
                "r": {"err": "no"}, "f": ["read"], "t": [7, "x"],
            })
        );
        assert_eq!(to_json(&Val::Variant("empty".into(), None)), json!("empty"));
        assert_eq!(to_json(&Val::Option(None)), Value::Null);
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(int::<u8>(&json!(255), "/n"), Ok(255));
        let err = int::<u8>(&json!(256), "/n").unwrap_err();
        assert_eq!(err, "/n: expected an integer from 0 to 255, got 256");
        assert!(int::<i64>(&json!(1.5), "/n").is_err());
        assert_eq!(int::<u64>(&json!(u64::MAX), "/n"), Ok(u64::MAX));
    }
}
