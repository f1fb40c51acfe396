package main

import "github.com/nexar-go/nexar-go/nexarlive"

func main() { nexarlive.Main() }
