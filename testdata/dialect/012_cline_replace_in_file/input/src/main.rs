fn main() {
    println!("hi");
}

fn helper() -> u32 {
    1
}
