fn a() {
    setup();
    run();
}

fn b() {
    run();
}
