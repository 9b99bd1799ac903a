package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/fragility/fragility/models"
)

// hashModel returns the hex sha256 and the size of a model file, hashed at
// most once per process (models.SHA256FileOnce: a run has already hashed
// it for its manifest).
func hashModel(path string) (string, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	sum, err := models.SHA256FileOnce(path)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return sum, st.Size(), nil
}

// hashFile returns the hex sha256 and the size of the file at path.
func hashFile(path string) (string, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
