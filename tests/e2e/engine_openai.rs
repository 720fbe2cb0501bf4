//! Turns against an OpenAI-compatible endpoint (the mock model server).
