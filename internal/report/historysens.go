package report

import (
	"fmt"

	"wirespeed/internal/history"
)

// SensitivitySentence says how large a step a series could have shown,
// for a series where none was found: "8 points: a step under 35%
// cannot be told from noise here", or "5 points: too few to find a
// change point (it takes 6, 3 on either side)". "" when the series'
// changes were not looked for.
func SensitivitySentence(s history.Series) string {
	v := s.Sensitivity
	switch {
	case v.Needed == 0:
		return ""
	case !v.Detectable():
		return fmt.Sprintf("%d points: too few to find a change point (it takes %d, %d on either side)", v.Points, v.Needed, v.Needed/2)
	case v.MinStepPct == nil:
		return ""
	}
	pct := *v.MinStepPct
	var p string
	switch {
	case pct >= 10:
		p = fmt.Sprintf("%.0f", pct)
	case pct >= 1:
		p = fmt.Sprintf("%.1f", pct)
	default:
		p = fmt.Sprintf("%.2g", pct)
	}
	return fmt.Sprintf("%d points: a step under %s%% cannot be told from noise here", v.Points, p)
}
