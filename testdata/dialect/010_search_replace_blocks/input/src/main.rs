fn main() {
    let x = old_name();
}
