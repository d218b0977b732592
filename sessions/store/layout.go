package store

// ConfigFile is the name of zwarm's settings file in the state directory.
const ConfigFile = "config.toml"
