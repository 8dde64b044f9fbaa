package result_test

// The tests of package result read its warnings' words (result.Texts),
// which package report alone gives them: linking report into the test
// binary sets its renderer (result.SetRenderer).
import _ "wirespeed/internal/report"
