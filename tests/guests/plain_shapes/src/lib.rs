//! Test guest: a plain component. It does not implement toolhost's contract
//! (`wit/tool.wit`); it exports ordinary functions (`wit/world.wit`) so the
//! host can derive tools from them.

use std::cell::Cell;

wit_bindgen::generate!({
    path: "wit",
    world: "shapes",
});

use exports::test::shapes::text::{self, GuestCounter};

struct Shapes;

impl Guest for Shapes {
    fn add(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }

    fn describe_point(p: Point) -> String {
        match p.label {
            Some(label) => format!("{label} at ({}, {})", p.x, p.y),
            None => format!("({}, {})", p.x, p.y),
        }
    }

    fn classify(n: u8) -> Size {
        match n {
            0..10 => Size::Small,
            10..100 => Size::Medium,
            _ => Size::Large,
        }
    }

    fn safe_divide(a: f64, b: f64) -> Result<f64, String> {
        if b == 0.0 {
            Err("division by zero".to_string())
        } else {
            Ok(a / b)
        }
    }

    fn first_word(text: String) -> Option<String> {
        text.split_whitespace().next().map(str::to_string)
    }

    fn sum_list(items: Vec<i64>) -> i64 {
        items.iter().fold(0i64, |acc, x| acc.wrapping_add(*x))
    }

    fn shape_area(s: Shape) -> f64 {
        match s {
            Shape::Circle(r) => std::f64::consts::PI * r * r,
            Shape::Rect(d) => d.width * d.height,
            Shape::Empty => 0.0,
        }
    }

    fn set_flags(f: Permissions) -> Vec<String> {
        [
            (Permissions::READ, "read"),
            (Permissions::WRITE, "write"),
            (Permissions::EXEC, "exec"),
        ]
        .into_iter()
        .filter(|(flag, _)| f.contains(*flag))
        .map(|(_, name)| name.to_string())
        .collect()
    }

    fn swap(pair: (String, u32)) -> (u32, String) {
        (pair.1, pair.0)
    }

    fn no_docs() -> bool {
        true
    }
}

impl text::Guest for Shapes {
    type Counter = Counter;

    fn upper(s: String) -> String {
        s.to_uppercase()
    }

    fn add(a: i32, b: i32) -> i32 {
        a.wrapping_add(b).wrapping_add(1000)
    }

    fn a_function_with_a_really_long_name_that_goes_on_and_on_for_quite_a_while_indeed() -> u32 {
        7
    }
}

/// Backs the `counter` resource.
struct Counter {
    value: Cell<u32>,
}

impl GuestCounter for Counter {
    fn new(start: u32) -> Self {
        Self {
            value: Cell::new(start),
        }
    }

    fn get(&self) -> u32 {
        self.value.get()
    }
}

export!(Shapes);
