fn main() {
    let x = new_name();
}
