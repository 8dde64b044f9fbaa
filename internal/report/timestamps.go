package report

import (
	"fmt"
	"strings"
)

// DefaultTimestamp is iperf3's --timestamps default, strftime's "%c ":
// "Tue Dec  1 13:07:05 2026 ".
const DefaultTimestamp = "%c "

// strftime maps the strftime conversions iperf3's --timestamps=FORMAT
// users write to Go's layout.
var strftime = map[byte]string{
	'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'h': "Jan",
	'c': "Mon Jan _2 15:04:05 2006", 'd': "02", 'e': "_2", 'F': "2006-01-02",
	'H': "15", 'I': "03", 'j': "002", 'm': "01", 'M': "04", 'p': "PM",
	'S': "05", 'T': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700",
	'Z': "MST", 'D': "01/02/06", 'R': "15:04", 'r': "03:04:05 PM",
	'%': "%",
}

// TimestampLayout turns a strftime format (iperf3's --timestamps=FORMAT:
// "%c ", "%F %T ") into a Go time layout. Text outside conversions is
// kept; Go layout words in it ("2006", "Mon") would be read as such, so
// they are refused rather than misprinted. A conversion Go cannot write
// is an error that lists the ones it can.
func TimestampLayout(format string) (string, error) {
	var b strings.Builder
	lit := func(text string) error {
		if strings.ContainsAny(text, "0123456789") || strings.Contains(text, "Jan") || strings.Contains(text, "Mon") ||
			strings.Contains(text, "MST") || strings.Contains(text, "PM") || strings.Contains(text, "pm") {
			return fmt.Errorf("timestamp format %q: the text %q would be read as part of a date; leave digits and Jan, Mon, MST, PM out of the text between conversions", format, text)
		}
		b.WriteString(text)
		return nil
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			j := strings.IndexByte(format[i:], '%')
			if j < 0 {
				j = len(format) - i
			}
			if err := lit(format[i : i+j]); err != nil {
				return "", err
			}
			i += j - 1
			continue
		}
		if i+1 == len(format) {
			return "", fmt.Errorf("timestamp format %q ends in a lone %%", format)
		}
		i++
		g, ok := strftime[format[i]]
		if !ok {
			return "", fmt.Errorf("timestamp format %q: %%%c is not supported; use %%a %%A %%b %%B %%c %%d %%D %%e %%F %%H %%I %%j %%m %%M %%p %%r %%R %%S %%T %%y %%Y %%z %%Z %%%%", format, format[i])
		}
		b.WriteString(g)
	}
	return b.String(), nil
}
