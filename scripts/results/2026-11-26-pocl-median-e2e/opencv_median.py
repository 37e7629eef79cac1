import sys, cv2
img = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
cv2.imwrite(sys.argv[2], cv2.medianBlur(img, int(sys.argv[3])))
