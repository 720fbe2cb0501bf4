//! Payloads on the relay channel that no worker published: forged or malformed `NOTIFY`s.
