//! Small arithmetic helpers.

pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn double(x: i32) -> i32 {
    x * 2
}

pub fn twice(x: i32) -> i32 {
    x * 2
}

pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}
