package supervisor

import "sort"

// findCycle returns one dependency cycle as task ids, first repeated last, or nil.
func findCycle(tasks []Task, byID map[string]*Task) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(byID))
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range byID[id].DependsOn {
			if byID[d] == nil || d == id {
				continue
			}
			switch color[d] {
			case grey:
				for i, s := range stack {
					if s == d {
						found = append(append([]string(nil), stack[i:]...), d)
						return true
					}
				}
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return false
	}
	ids := make([]string, 0, len(byID))
	for _, t := range tasks {
		if byID[t.ID] != nil && color[t.ID] == white {
			ids = append(ids, t.ID)
		}
	}
	for _, id := range ids {
		if color[id] == white && visit(id) {
			return found
		}
	}
	return nil
}

// Order returns the job's tasks so that every task comes after the ones it
// depends on, keeping file order where the graph allows.
func Order(tasks []Task) []Task {
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.ID] = i
	}
	done := make(map[string]bool, len(tasks))
	out := make([]Task, 0, len(tasks))
	for len(out) < len(tasks) {
		var next []int
		for i, t := range tasks {
			if done[t.ID] {
				continue
			}
			ok := true
			for _, d := range t.DependsOn {
				if _, known := index[d]; known && !done[d] {
					ok = false
					break
				}
			}
			if ok {
				next = append(next, i)
			}
		}
		if len(next) == 0 { // a cycle: Validate refuses it; keep what is left in file order
			for _, t := range tasks {
				if !done[t.ID] {
					out = append(out, t)
					done[t.ID] = true
				}
			}
			break
		}
		sort.Ints(next)
		for _, i := range next {
			out = append(out, tasks[i])
			done[tasks[i].ID] = true
		}
	}
	return out
}
