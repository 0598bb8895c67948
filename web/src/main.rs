//! WASM entry point: installs the panic hook and mounts the app.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(roofline_web::App);
}
