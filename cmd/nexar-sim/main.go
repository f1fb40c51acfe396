package main

import "github.com/nexar-go/nexar-go/nexarsim"

func main() { nexarsim.Main() }
