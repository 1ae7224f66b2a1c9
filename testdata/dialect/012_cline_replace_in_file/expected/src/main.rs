fn main() {
    println!("hello");
}

fn helper() -> u32 {
    2
}
