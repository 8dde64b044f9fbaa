package netconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wirespeed/internal/netdev"
)

// Check reports whether the settings could be made on the session's
// device, without changing anything: every feature exists on it and at
// least one of its kernel features can change, and every MTU is positive.
// It says everything that is wrong at once, so that a matrix can refuse
// to start rather than fail halfway.
func (s *Session) Check(settings ...Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrEnded
	}
	var errs []error
	var fs netdev.Features
	for _, st := range settings {
		if st.isMTU() {
			if st.MTU <= 0 {
				errs = append(errs, fmt.Errorf("mtu %d on %s: the MTU must be positive", st.MTU, s.opts.Dev))
			}
			continue
		}
		if s.origFeatures == nil {
			errs = append(errs, fmt.Errorf("%s on %s: cannot read its features: %w", st, s.opts.Dev, s.featuresErr))
			continue
		}
		if fs == nil {
			var err error
			if fs, err = s.dev.features(); err != nil {
				return fmt.Errorf("read features of %s: %w", s.opts.Dev, err)
			}
		}
		canon, members, err := fs.Resolve(st.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s on %s: %w", st, s.opts.Dev, err))
			continue
		}
		changeable := false
		for _, m := range members {
			changeable = changeable || m.Changeable
		}
		if !changeable {
			errs = append(errs, fmt.Errorf("%s on %s: %s is %w and stays %s", st, s.opts.Dev, canon, netdev.ErrFixed, onOff(members.GroupSummary(canon).On)))
		}
	}
	return errors.Join(errs...)
}

// Verify reports whether every setting is in effect on the device now:
// each feature's changeable kernel features active or not as asked, the
// MTU as asked. Turning one feature off can turn off others that depend
// on it (tx-checksumming off takes TSO with it), so a combination set in
// order can still fail to hold as a whole; the error wraps ErrNotApplied
// and names each setting that does not hold and its state.
func (s *Session) Verify(settings ...Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrEnded
	}
	var wrong []string
	var fs netdev.Features
	for _, st := range settings {
		if st.isMTU() {
			now, err := s.dev.mtu()
			if err != nil {
				return fmt.Errorf("read mtu of %s: %w", s.opts.Dev, err)
			}
			if now != st.MTU {
				wrong = append(wrong, "mtu is "+strconv.Itoa(now))
			}
			continue
		}
		if fs == nil {
			var err error
			if fs, err = s.dev.features(); err != nil {
				return fmt.Errorf("read features of %s: %w", s.opts.Dev, err)
			}
		}
		_, members, err := fs.Resolve(st.Name)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", st, s.opts.Dev, err)
		}
		var off, on []string
		for _, m := range members {
			if !m.Changeable || m.Active == st.On {
				continue
			}
			if m.Active {
				on = append(on, m.Name)
			} else {
				off = append(off, m.Name)
			}
		}
		if len(on)+len(off) > 0 {
			wrong = append(wrong, fmt.Sprintf("%s is not %s (%s)", st.Name, onOff(st.On), strings.Join(append(on, off...), ", ")))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("%s: %s: %w", s.opts.Dev, strings.Join(wrong, "; "), ErrNotApplied)
	}
	return nil
}

// RestoreNow restores the session now even when Options.Keep asks to
// leave the settings: for a run that was cut short (Ctrl-C, SIGTERM, a
// lost connection), which did not choose its last setting. Like Restore,
// only the first call of either does anything.
func (s *Session) RestoreNow() error { return s.end(false) }

// Dev names the session's device.
func (s *Session) Dev() string { return s.opts.Dev }
