//go:build windows

package runtimes

import (
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// kernel32 procedures for job objects; syscall has no wrappers for them,
// and x/sys needs a newer go directive than this module's go.mod states.
var (
	kernel32                      = syscall.NewLazyDLL("kernel32.dll")
	procCreateJobObjectW          = kernel32.NewProc("CreateJobObjectW")
	procSetInformationJobObject   = kernel32.NewProc("SetInformationJobObject")
	procAssignProcessToJobObject  = kernel32.NewProc("AssignProcessToJobObject")
	procTerminateJobObject        = kernel32.NewProc("TerminateJobObject")
	procQueryInformationJobObject = kernel32.NewProc("QueryInformationJobObject")
	procGenerateConsoleCtrlEvent  = kernel32.NewProc("GenerateConsoleCtrlEvent")
)

const (
	createNewProcessGroup        = 0x00000200
	ctrlBreakEvent               = 1
	processSetQuota              = 0x0100
	processTerminate             = 0x0001
	jobObjectBasicAccountingInfo = 1
	jobObjectExtendedLimitInfo   = 9
	jobObjectLimitKillOnJobClose = 0x00002000
)

// jobBasicLimits is JOBOBJECT_BASIC_LIMIT_INFORMATION.
type jobBasicLimits struct {
	PerProcessUserTimeLimit int64
	PerJobUserTimeLimit     int64
	LimitFlags              uint32
	MinimumWorkingSetSize   uintptr
	MaximumWorkingSetSize   uintptr
	ActiveProcessLimit      uint32
	Affinity                uintptr
	PriorityClass           uint32
	SchedulingClass         uint32
}

// jobExtendedLimits is JOBOBJECT_EXTENDED_LIMIT_INFORMATION.
type jobExtendedLimits struct {
	Basic                 jobBasicLimits
	IoCounters            [6]uint64
	ProcessMemoryLimit    uintptr
	JobMemoryLimit        uintptr
	PeakProcessMemoryUsed uintptr
	PeakJobMemoryUsed     uintptr
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// setGroupAttr starts the child in a new process group, so that a
// CTRL_BREAK_EVENT reaches it and its children but not agentkit.
func setGroupAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: createNewProcessGroup}
}

// group is a session's process tree, held in a job object: every process the
// child starts joins the job, and terminating the job ends them all (what
// taskkill /T /F does, without missing orphans).
type group struct {
	proc *os.Process
	job  syscall.Handle // 0 when the job could not be made: the leader alone is handled
}

func newGroup(p *os.Process) *group {
	g := &group{proc: p}
	r, _, _ := procCreateJobObjectW.Call(0, 0)
	if r == 0 {
		return g
	}
	job := syscall.Handle(r)
	var limits jobExtendedLimits
	limits.Basic.LimitFlags = jobObjectLimitKillOnJobClose
	procSetInformationJobObject.Call(uintptr(job), jobObjectExtendedLimitInfo,
		uintptr(unsafe.Pointer(&limits)), unsafe.Sizeof(limits))
	h, err := syscall.OpenProcess(processSetQuota|processTerminate, false, uint32(p.Pid))
	if err != nil {
		syscall.CloseHandle(job)
		return g
	}
	defer syscall.CloseHandle(h)
	if r, _, _ := procAssignProcessToJobObject.Call(uintptr(job), uintptr(h)); r == 0 {
		syscall.CloseHandle(job)
		return g
	}
	g.job = job
	return g
}

// terminate asks the group to stop: CTRL_BREAK_EVENT, Windows' nearest thing to SIGTERM.
func (g *group) terminate() error {
	if r, _, err := procGenerateConsoleCtrlEvent.Call(ctrlBreakEvent, uintptr(g.proc.Pid)); r == 0 {
		return err
	}
	return nil
}

// kill ends every process of the job at once.
func (g *group) kill() error {
	if g.job != 0 {
		if r, _, _ := procTerminateJobObject.Call(uintptr(g.job), 1); r != 0 {
			return nil
		}
	}
	return g.proc.Kill()
}

// alive reports whether a process of the job is still running.
func (g *group) alive() bool {
	if g.job == 0 {
		return false // only the leader is known, and the caller waits for it
	}
	var info jobAccounting
	r, _, _ := procQueryInformationJobObject.Call(uintptr(g.job), jobObjectBasicAccountingInfo,
		uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info), 0)
	return r != 0 && info.ActiveProcesses > 0
}

// close releases the job; KILL_ON_JOB_CLOSE ends anything still in it.
func (g *group) close() {
	if g.job != 0 {
		syscall.CloseHandle(g.job)
		g.job = 0
	}
}
