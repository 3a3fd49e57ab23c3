fn main() {
    println!("Hello from {{ crate_name }}!");
}
