fn main() {
    print!("{}", gauntlet_world::reference_markdown());
}
