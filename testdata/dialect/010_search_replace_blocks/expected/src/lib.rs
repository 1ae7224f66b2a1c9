pub fn new_name() -> u32 {
    1
}
