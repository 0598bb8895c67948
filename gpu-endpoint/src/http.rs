//! The HTTP layer: [`app::configure`], the application factory (used by `main` and every test);
//! [`state`], what the handlers share; [`middleware`], auth, CORS, the cross-site checks, body limits and
//! JSON errors; `routes`, thin handlers that parse a request, call a use case (`crate::use_cases`) off the
//! executor and answer with a wire type; [`error`], the one [`error::ApiError`]; [`server`], the HTTP server `serve` and in-process tests run.
//!
//! The factory names the routes, the middleware and the state; none of them names the factory.

pub mod app;
pub mod error;
pub mod middleware;
mod routes;
pub mod server;
pub mod state;
