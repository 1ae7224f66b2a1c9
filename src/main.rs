fn main() {
    println!("redline: under construction");
}
