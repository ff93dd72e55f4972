//! see include/depositkit.h
