package client

// TakeBaseline lets the external tests count the client's idle baselines.
var TakeBaseline = &takeBaseline
