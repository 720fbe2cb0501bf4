//! Crash safety: a server killed mid-turn loses at most the item in flight.
