fn a() {
    run();
}

fn b() {
    run();
}
